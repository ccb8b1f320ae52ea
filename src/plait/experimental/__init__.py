"""``plait.experimental``: ``io_callback``, a host callback with side effects
and results (JAX's ``jax.experimental.io_callback``), and the sub-modules
``checkify`` (run-time checks returned as values), ``ode`` (``odeint``),
``mesh_utils`` (devices arranged as a mesh),
``jet`` (Taylor-mode derivatives), ``layout`` (JAX's ``Layout``/``Format``;
plait keeps arrays row-major), ``compilation_cache`` (``set_cache_dir``) and
``shard_map`` (the older home of ``plait.shard_map``), and ``hijax`` (JAX's
high-level types, as far as plait has them; with ``cur_qdd``)."""

from __future__ import annotations

from plait.experimental import checkify as checkify
from plait.experimental import compilation_cache as compilation_cache
from plait.experimental import hijax as hijax
from plait.experimental import jet as jet
from plait.experimental import layout as layout
from plait.experimental import mesh_utils as mesh_utils
from plait.experimental import ode as ode
from plait.experimental import shard_map as shard_map
from plait.experimental.hijax import cur_qdd
from plait_core.host_callbacks import io_callback

__all__ = ["checkify", "compilation_cache", "cur_qdd", "hijax", "io_callback", "jet", "layout", "mesh_utils", "ode",
           "shard_map"]
