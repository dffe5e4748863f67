"""spieltisch training: the trainers, the command line, the web server."""

import spieltisch.envs  # noqa: F401  (first: it points numba's cache, before any kernel)
