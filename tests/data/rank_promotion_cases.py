"""Library functions whose inputs have different ranks, evaluated under
``jax_numpy_rank_promotion='raise'``: make_rank_promotion_reference.py records JAX
0.10.2's values and tests/test_rank_promotion_raise.py replays them.

JAX's own library code broadcasts explicitly, so the setting refuses only the user's
implicit broadcasts; each case here once raised inside jaxlite's library code (diffrax's
tests set 'raise' and call ``jnp.polyfit``). ``CASES`` maps a name to the source of an
expression over ``jax``, ``jnp`` and the arrays of ``ARRAYS``; a tuple result is
compared leaf by leaf.
"""
ARRAYS = """
x = jnp.linspace(0.1, 1.0, 7)
y = jnp.cos(x)
Y = jnp.stack([y, 2 * y], 1)
w = jnp.linspace(1.0, 2.0, 7)
M = jnp.arange(12.0).reshape(3, 4) + 1
S = M @ M.T / 100 + jnp.eye(3)
sig = jnp.sin(jnp.arange(64.0) / 3)
key = jax.random.key(0)
"""
CASES = {
    "polyfit": "jnp.polyfit(x, y, 2)",
    "polyfit_columns": "jnp.polyfit(x, Y, 2)",
    "polyfit_weights": "jnp.polyfit(x, y, 2, w=w)",
    "polyfit_weights_columns": "jnp.polyfit(x, Y, 2, w=w)",
    "polyfit_cov": "jnp.polyfit(x, y, 2, cov=True)",
    "polyfit_cov_columns": "jnp.polyfit(x, Y, 2, cov=True)",
    "polyfit_cov_unscaled": "jnp.polyfit(x, y, 2, cov='unscaled')",
    "polyfit_full": "jnp.polyfit(x, y, 2, full=True)",
    "cov_weights": "jnp.cov(M, fweights=jnp.array([1, 2, 1, 1]), "
                   "aweights=jnp.array([1.0, 2.0, 1.0, 1.0]))",
    "gaussian_kde": "jax.scipy.stats.gaussian_kde(jnp.stack([x, y])).evaluate(jnp.stack([y, x]))",
    "gaussian_kde_1d": "jax.scipy.stats.gaussian_kde(x, weights=w).evaluate(y)",
    "expm_stack": "jax.scipy.linalg.expm(jnp.stack([S, -S]) / 4)",
    "welch": "jax.scipy.signal.welch(sig, nperseg=16)",
    "csd": "jax.scipy.signal.csd(sig, jnp.cos(sig), nperseg=16)",
    "stft": "jax.scipy.signal.stft(sig, nperseg=16)",
    "istft": "jax.scipy.signal.istft(jax.scipy.signal.stft(sig, nperseg=16)[2], nperseg=16)",
    "uniform_bounds": "jax.random.uniform(key, (4, 3), minval=jnp.array([0.0, 1.0, 2.0]), "
                      "maxval=4.0)",
    "randint_bounds": "jax.random.randint(key, (4, 3), jnp.array([0, 5, 10]), 20)",
    "wald": "jax.random.wald(key, jnp.array([0.5, 1.0, 2.0]), (4, 3))",
    "triangular": "jax.random.triangular(key, 0.0, jnp.array([0.2, 0.5, 0.8]), 1.0, (4, 3))",
    "dot_product_attention_causal": (
        "jax.nn.dot_product_attention(jnp.sin(jnp.arange(64.0)).reshape(1, 4, 2, 8), "
        "jnp.cos(jnp.arange(64.0)).reshape(1, 4, 2, 8), jnp.arange(64.0).reshape(1, 4, 2, 8) / 64, "
        "is_causal=True, query_seq_lengths=jnp.array([3]), key_value_seq_lengths=jnp.array([3]))"),
}
