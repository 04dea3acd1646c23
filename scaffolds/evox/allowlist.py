"""What a strategy module may name: modules, each module's attributes, and builtins — allow-lists.

The pre-filter (:mod:`scaffolds.evox.prefilter`) accepts a module attribute only if it is listed
here under its module, and a free name only if it is a listed builtin.  Anything not listed is
refused, so a route nobody thought of is closed by default; a useful name that is missing is one
line to add (with a test that it exists on the host's copy of the module and is not itself a
module outside the list: ``tests/evox/test_prefilter.py``).

Why some familiar names are absent: ``operator.attrgetter``/``methodcaller`` and
``functools.wraps`` (string-keyed attribute access), ``functools.singledispatch`` and
``typing.get_type_hints``/``ForwardRef`` (they evaluate annotation strings),
``logging.currentframe`` (a frame), ``logging.Formatter`` (``{``-style format strings walk
attributes), ``abc.ABCMeta``/``enum.EnumMeta`` (metaclasses), ``dataclasses.make_dataclass`` (a
class from a namespace dict), ``typing.Type`` (it stands for the metaclass ``type``: subclassing
it makes a metaclass), ``random.SystemRandom`` (non-deterministic), numpy's file, native and
sub-package entry points.
"""

from __future__ import annotations

__all__ = [
    "ALLOWED",
    "BUILTINS",
    "DUNDER_METHODS",
    "FRAME_ATTRIBUTES",
    "RESTRICTED_BUILTINS",
    "WHY",
]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NUMPY = _names(
    """
    abs absolute add all allclose amax amin any append arange arccos arcsin arctan arctan2
    argmax argmin argpartition argsort argwhere array array_equal array_split asarray
    atleast_1d atleast_2d average bincount bool_ cbrt ceil clip column_stack concatenate
    convolve corrcoef correlate cos cosh count_nonzero cov cross cumprod cumsum deg2rad diag
    diff digitize divide dot dstack dtype e einsum empty empty_like equal errstate
    euler_gamma exp exp2 expand_dims expm1 eye fabs flatnonzero flip fliplr flipud float16
    float32 float64 floating floor floor_divide fmax fmin fmod full full_like greater
    greater_equal histogram histogram_bin_edges hstack hypot identity inf inner int16 int32
    int64 int8 int_ integer interp intersect1d isclose isfinite isin isinf isnan isscalar
    less less_equal lexsort linalg linspace log log10 log1p log2 logical_and logical_not
    logical_or logical_xor matmul max maximum mean median meshgrid min minimum mod multiply
    nan nanargmax nanargmin nancumsum nanmax nanmean nanmedian nanmin nanpercentile nanprod
    nanquantile nanstd nansum nanvar ndarray ndim negative newaxis nonzero not_equal number
    ones ones_like outer partition percentile pi polyfit polyval power prod ptp quantile
    rad2deg random ravel reciprocal remainder repeat reshape rint roll round searchsorted
    setdiff1d shape sign signbit sin sinh size sort split sqrt square squeeze stack std
    subtract sum swapaxes take tan tanh tile trace transpose tril triu true_divide trunc
    uint16 uint32 uint64 uint8 union1d unique var vstack where zeros zeros_like
    """
)
_NUMPY_RANDOM = _names(
    """
    Generator RandomState beta binomial choice default_rng dirichlet exponential gamma
    geometric get_state gumbel laplace logistic lognormal multinomial
    multivariate_normal normal permutation poisson rand randint randn random random_sample
    seed set_state shuffle standard_normal triangular uniform weibull
    """
)
_NUMPY_LINALG = _names(
    """
    LinAlgError cholesky cond det eig eigh eigvals eigvalsh inv lstsq matrix_power
    matrix_rank norm pinv qr slogdet solve svd
    """
)
_MATH = _names(
    """
    acos acosh asin asinh atan atan2 atanh cbrt ceil comb copysign cos cosh degrees dist e
    erf erfc exp exp2 expm1 fabs factorial floor fmod frexp fsum gamma gcd hypot inf isclose
    isfinite isinf isnan isqrt lcm ldexp lgamma log log10 log1p log2 modf nan nextafter perm
    pi pow prod radians remainder sin sinh sqrt tan tanh tau trunc ulp
    """
)
_TYPING = _names(
    """
    AbstractSet Annotated Any Callable ClassVar Collection Counter DefaultDict Deque Dict
    Final FrozenSet Generator Generic Hashable Iterable Iterator List Literal Mapping
    MutableMapping MutableSequence MutableSet NamedTuple NoReturn Optional OrderedDict
    Protocol Self Sequence Set Sized SupportsFloat SupportsInt TYPE_CHECKING Tuple
    TypeAlias TypeVar TypedDict Union cast final get_args get_origin overload
    runtime_checkable
    """
)
_COLLECTIONS_ABC = _names(
    """
    Callable Collection Container Generator Hashable ItemsView Iterable Iterator KeysView
    Mapping MutableMapping MutableSequence MutableSet Reversible Sequence Set Sized
    ValuesView
    """
)

#: module → the attributes a strategy may use (``mod.attr``, ``from mod import attr``,
#: ``getattr(mod, "attr")``).  A listed attribute that is a module must be a key here too.
ALLOWED: dict[str, frozenset[str]] = {
    "__future__": _names("annotations"),
    "abc": _names("ABC abstractmethod"),
    "bisect": _names("bisect bisect_left bisect_right insort insort_left insort_right"),
    "collections": _names("ChainMap Counter OrderedDict abc defaultdict deque namedtuple"),
    "collections.abc": _COLLECTIONS_ABC,
    "copy": _names("copy deepcopy"),
    "dataclasses": _names(
        "FrozenInstanceError InitVar KW_ONLY MISSING asdict astuple dataclass field fields "
        "is_dataclass replace"
    ),
    "enum": _names("Enum Flag IntEnum IntFlag StrEnum auto unique"),
    "functools": _names(
        "cache cached_property cmp_to_key lru_cache partial partialmethod reduce total_ordering"
    ),
    "heapq": _names("heapify heappop heappush heappushpop heapreplace merge nlargest nsmallest"),
    "itertools": _names(
        "accumulate chain combinations combinations_with_replacement compress count cycle "
        "dropwhile filterfalse groupby islice pairwise permutations product repeat starmap "
        "takewhile tee zip_longest"
    ),
    "json": _names("JSONDecodeError dumps loads"),
    "logging": _names(
        "CRITICAL DEBUG ERROR INFO Logger LoggerAdapter NOTSET NullHandler WARNING critical debug "
        "error exception getLogger info log warning"
    ),
    "math": _MATH,
    "numpy": _NUMPY,
    "numpy.linalg": _NUMPY_LINALG,
    "numpy.random": _NUMPY_RANDOM,
    "operator": _names(
        "abs add and_ contains countOf eq floordiv ge getitem gt index indexOf itemgetter le lt "
        "mod mul ne neg not_ or_ pos pow sub truediv truth xor"
    ),
    "random": _names(
        "Random betavariate choice choices expovariate gammavariate gauss getrandbits getstate "
        "lognormvariate normalvariate paretovariate randint random randrange sample seed "
        "setstate shuffle triangular uniform vonmisesvariate weibullvariate"
    ),
    "re": _names(
        "A ASCII DOTALL I IGNORECASE M MULTILINE Match Pattern S VERBOSE X compile error escape "
        "findall finditer fullmatch match search split sub subn"
    ),
    "statistics": _names(
        "NormalDist StatisticsError correlation covariance fmean geometric_mean harmonic_mean "
        "linear_regression mean median median_high median_low mode multimode pstdev pvariance "
        "quantiles stdev variance"
    ),
    "typing": _TYPING,
    # The reference's import paths; inside the sandbox these are Galapagos' shims.
    "skydiscover": _names("config search"),
    "skydiscover.config": _names("DatabaseConfig EvoxDatabaseConfig"),
    "skydiscover.search": _names("base_database database_config"),
    "skydiscover.search.base_database": _names(
        "Program ProgramDatabase get_score is_numeric_metric"
    ),
    "skydiscover.search.database_config": _names("DatabaseConfig EvoxDatabaseConfig"),
}

#: Free names a strategy may use without defining them.  Everything else of ``builtins`` —
#: ``exec``, ``eval``, ``compile``, ``open``, ``__import__``, ``globals``, ``locals``, ``vars``,
#: ``dir``, ``setattr``, ``delattr``, ``input``, ``breakpoint``, ``memoryview``, ``help``, … — is
#: refused by not being here.
BUILTINS = _names(
    """
    abs aiter all anext any ascii bin bool bytearray bytes callable chr classmethod complex dict
    divmod enumerate filter float format frozenset getattr hasattr hash hex id int isinstance
    issubclass iter len list map max min next object oct ord pow print property range repr
    reversed round set slice sorted staticmethod str sum super tuple type zip
    NotImplemented Ellipsis
    ArithmeticError AssertionError AttributeError BaseException Exception FloatingPointError
    IndexError KeyError LookupError NotImplementedError OverflowError RecursionError
    RuntimeError StopIteration TypeError ValueError ZeroDivisionError
    DeprecationWarning RuntimeWarning UserWarning Warning
    __name__
    """
)
#: Builtins allowed only in one shape (see the pre-filter): ``getattr``/``hasattr`` called
#: directly with a literal name, ``type(x)`` with one argument inside a comparison, ``super``
#: called directly then an attribute.  They can never be values (aliased, passed, stored).
RESTRICTED_BUILTINS = frozenset({"getattr", "hasattr", "type", "super"})

#: Dunder methods a strategy's class body may define (an allow-list too: ``__getattr__``,
#: ``__init_subclass__``, ``__class_getitem__``, ``__set_name__``, ``__del__``, ``__reduce__``,
#: ``__new__``, ``__call__``, ``__instancecheck__`` … are refused).
DUNDER_METHODS = _names(
    """
    __init__ __post_init__ __repr__ __str__ __len__ __iter__ __next__ __hash__ __getitem__
    __contains__ __bool__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__
    """
)

#: Attributes of frames, code objects, generators, coroutines, tracebacks and cells: the road
#: from any function or generator to a module's globals and builtins.  Refused on any object.
FRAME_ATTRIBUTES = _names(
    """
    f_back f_builtins f_code f_generator f_globals f_lasti f_lineno f_locals f_trace
    f_trace_lines f_trace_opcodes
    gi_code gi_frame gi_running gi_suspended gi_yieldfrom
    cr_await cr_code cr_frame cr_origin cr_running cr_suspended
    ag_await ag_code ag_frame ag_running
    tb_frame tb_lasti tb_lineno tb_next
    co_argcount co_cellvars co_code co_consts co_exceptiontable co_filename co_firstlineno
    co_flags co_freevars co_kwonlyargcount co_lines co_linetable co_lnotab co_name co_names
    co_nlocals co_positions co_posonlyargcount co_qualname co_stacksize co_varnames
    cell_contents func_code func_globals
    """
)

#: Why the usual suspects are refused (shown to the meta-LLM).
WHY = {
    "os": "operating-system access",
    "sys": "interpreter internals",
    "subprocess": "processes",
    "socket": "network access",
    "ctypes": "raw memory access",
    "gc": "interpreter internals",
    "inspect": "reflection",
    "importlib": "dynamic imports",
    "builtins": "interpreter internals",
    "pickle": "arbitrary code on load",
    "marshal": "code objects",
    "threading": "threads",
    "multiprocessing": "processes",
    "concurrent": "threads and processes",
    "signal": "signals",
    "resource": "process limits",
    "time": "wall-clock time makes a strategy non-deterministic",
    "shutil": "file access",
    "pathlib": "file access",
    "io": "file access",
    "tempfile": "file access",
    "urllib": "network access",
    "http": "network access",
    "requests": "network access",
    "asyncio": "event loops",
    "atexit": "interpreter hooks",
    "platform": "host details",
    "types": "reflection",
    "string": "format strings that walk attributes",
    "traceback": "frames",
}
