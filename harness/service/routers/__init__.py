"""One router per resource; ``pages`` renders the HTML."""
