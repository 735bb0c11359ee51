"""The tier policy's tuning numbers, in one place.

Each is a measured trade-off, not a law: the comment says what it trades, and
``benchmarks/README.md`` has the measurements (its "Measurements moved out of code
comments" section, and the issue 19 and 42 passes). The classes that use them take them
as class attributes (``tiers.Probe.BUDGET = tuning.PROBE_BUDGET``), so a test or a probe
can change one for one class.
"""

# -- the probe: when a signature on tier 0 earns an XLA compile (``tiers.Probe``)
# Seconds of execution that earn a race: below it XLA's compile cannot pay for itself.
PROBE_BUDGET = 50e-3
# The first calls, whose latency matters most: two calls in a row that would spend the
# budget within this many calls start the race at once.
PROBE_EARLY_CALLS = 200
# Calls after which a signature that never earned a race stops being watched.
PROBE_MAX_CALLS = 10_000
# A first call still running after this many seconds starts the race while it runs: XLA's
# compile, a fraction of such a call, is then ready for the second call, not during it.
PROBE_LONG_CALL = 1.0
# The thread that watches first calls for that sleeps once none has come for this long.
PROBE_WATCH_IDLE_AFTER = 10.0
# A while or scan loop still running on tier 0 after this many seconds compiles with XLA
# beside it and hands its state over once that is ready (``auto`` only).
LOOP_HANDOFF_AFTER = 0.5

# -- the race between tier 0 and XLA (``tiers.Race``)
# XLA's timed trials in the screen: few, since each takes the GIL from the callers.
RACE_TRIALS = 3
# An executable's first runs are slower than its steady ones: it runs untimed up to
# this many times, while the runs after the first take under the budget in seconds.
RACE_WARMUP = 8
RACE_WARMUP_BUDGET = 0.1
# With this many calls served by tier 0, their best time is tier 0's figure in the screen.
RACE_CALLER_CALLS = 8
# Seconds of the compile thread that tier 0's own trials may take, beside the callers'
# calls; where they would take longer, the calls served so far give tier 0's figure.
RACE_TRIALS_BUDGET = 0.1
# XLA this many times slower than tier 0 in its trials loses without being loaded here
# (its trials understate it by at most 2x, run beside the callers on fewer CPUs).
RACE_SCREEN = 2.0
# XLA this many times faster than tier 0 in its trials wins without the callers' verdict.
RACE_CLEAR = 0.67
# The verdict on the callers' calls: each tier settles in for this many seconds (OpenBLAS
# spins after tier 0's products), then this many of its calls are timed.
RACE_SETTLE = 0.15
RACE_CONFIRM = 8
# A verdict whose loser is within this factor of the winner is taken again after this
# many calls, then twice as many each time, so that a change of load moves the signature.
RACE_CLOSE = 1.5
RACE_REVIEW_AFTER = 1000
# Seconds of Python a run of XLA in the caller's process takes on top of a run in the
# compile server: the winner is warm once a run is within this of the server's.
REMOTE_GLUE = 50e-6

# -- remembered races (``tiers.LostRaces``)
# XLA this many times slower than tier 0 on the callers' calls is a clear loss.
LOST_MARGIN = 1.25
# Seconds a clear loss is remembered, and how many races must have found it.
LOST_TTL = 24 * 3600.0
LOST_CONFIRMATIONS = 2

# -- the background work's manners (``backends/background.py``)
# Seconds a hand-over of the GIL sleeps (about 55 us with Linux's timer slack): long
# enough for a waiting caller to take it.
YIELD_FOR = 5e-6
# Seconds of Python a background thread runs between hand-overs: rare wake-ups for the
# caller, and a wait for the GIL well under a switch interval.
TURN = 1e-3
# Seconds the compile server may take to start (its imports and XLA's client, loaded).
SERVER_START_TIMEOUT = 60.0
# Seconds a run of a race's winner takes from which the process's XLA client gets a pool
# thread per CPU: one pool thread runs short programs faster and long ones slower.
POOL_PER_CPU_FROM = 1e-3

# -- tier 0's products on a loaded machine (``background.HostBlas.product``)
# Threaded products a process runs before the watch starts (its first calls' products).
BLAS_WATCH_AFTER = 24
# A threaded product whose calling thread ran on a CPU for under this share of its time
# was starved: other work holds the CPUs its threads wait for.
BLAS_STARVED = 0.5
# Starved products in a row that move products to one thread: one alone can be a hiccup
# of an idle machine (1 product in 100 there), which cost big products their threads.
BLAS_STARVED_IN_ROW = 2
# Seconds tier 0's products then run on one thread before they try threads again, at
# first; doubled while threads are starved again sooner, up to the last figure.
BLAS_SINGLE_FOR = 1.0
BLAS_SINGLE_AT_MOST = 32.0
