"""Runnable examples with other RL libraries: ``python -m spieltisch.train.examples.<name> --help``.

* ``sb3_maskable_ppo``: sb3-contrib's MaskablePPO on the Gymnasium wrapper (``make_gym``);
* ``rllib_pettingzoo``: Ray RLlib PPO on the PettingZoo env through RLlib's ``PettingZooEnv``
  with an action-masking RLModule.
"""
