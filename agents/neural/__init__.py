"""Neural agents: the policy-value network (:mod:`.policy`), checkpoints (:mod:`.checkpoint`),
``pretrained:<game>`` and ``checkpoint:<path>`` agents (:mod:`.agents`) and the alpha-beta
search over a value head (:mod:`.value_search`)."""
