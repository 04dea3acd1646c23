# Robust Regression Implementation
# This program implements a regression algorithm that can be evolved to better handle outliers

robust_regression <- function(X, y) {
  # EVOLVE-BLOCK-START
  # Simple least squares regression as initial implementation
  # This can be evolved to use more robust methods like:
  # - Huber regression
  # - RANSAC
  # - Theil-Sen estimator
  # - Iteratively reweighted least squares
  
  # Add intercept column
  X_with_intercept <- cbind(1, X)
  
  # Calculate coefficients using normal equation
  # beta = (X'X)^(-1) X'y
  XtX <- t(X_with_intercept) %*% X_with_intercept
  Xty <- t(X_with_intercept) %*% y
  
  # Solve for coefficients
  coefficients <- solve(XtX, Xty)
  
  # Calculate predictions
  predictions <- X_with_intercept %*% coefficients
  
  # Calculate residuals
  residuals <- y - predictions
  
  # Return results
  return(list(
    coefficients = coefficients,
    predictions = predictions,
    residuals = residuals
  ))
  # EVOLVE-BLOCK-END
}

# Function to calculate model performance metrics
calculate_metrics <- function(y_true, y_pred, residuals) {
  n <- length(y_true)
  
  # Mean Squared Error
  mse <- mean(residuals^2)
  
  # Mean Absolute Error
  mae <- mean(abs(residuals))
  
  # R-squared
  ss_res <- sum(residuals^2)
  ss_tot <- sum((y_true - mean(y_true))^2)
  r_squared <- 1 - (ss_res / ss_tot)
  
  # Robust metrics
  # Median Absolute Error
  medae <- median(abs(residuals))
  
  # Percentage of outliers (residuals > 2 standard deviations)
  outlier_threshold <- 2 * sd(residuals)
  outlier_percentage <- sum(abs(residuals) > outlier_threshold) / n
  
  return(list(
    mse = mse,
    mae = mae,
    r_squared = r_squared,
    medae = medae,
    outlier_robustness = 1 - outlier_percentage
  ))
}

# Main execution function
main <- function() {
  # This will be called by the evaluator with test data
  # The evaluator will provide X and y through the environment
  
  # Perform robust regression
  result <- robust_regression(X, y)
  
  # Calculate metrics
  metrics <- calculate_metrics(y, result$predictions, result$residuals)
  
  return(metrics)
}