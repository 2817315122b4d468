"""The public plug-in API: everything a scheme, critic or domain plug-in needs, under one import.

    from critiquebench.plugins import Calls, feedback, rounds, verified_loop        # a scheme
    from critiquebench.plugins import Domain, Instance, LLMVerdict                  # a critic
    from critiquebench.plugins import Game24                                        # a domain built on one

The names in `__all__` are stable: within a major version they keep their meaning and signatures (new optional
parameters may be added), whatever moves inside the package; anything imported from elsewhere in critiquebench
is internal and may change in any release. `tests/test_plugins_api.py` checks that the shipped example plug-ins
(`tests/plugin_example/`) import nothing else, and docs/schemes.md lists these names (generated from this module).

The entry-point groups a plug-in package names its parts in are `ENTRY_POINTS`: a scheme module (a docstring,
`PARAMS`, `build(**params)`, `calls(params)`), a critic factory `make_critic(llm, domain, **params)` and a domain
factory `make_domain(**options)`.
"""

from __future__ import annotations

from critiquebench.domains.contract import (
    Candidates,
    Domain,
    FromFolder,
    Instance,
    Judged,
    Judgement,
    LLMVerdict,
    Prompted,
    SelfCritiqued,
    Unsupported,
    Verdict,
)
from critiquebench.domains.game24 import Game24
from critiquebench.graphs.cost import Calls, critic_calls
from critiquebench.graphs.loops import critic_loop, verified_loop
from critiquebench.graphs.params import Param, critic, feedback, history, rounds, samples, style, temperature, votes

ENTRY_POINTS = {"schemes": "critiquebench.schemes", "critics": "critiquebench.critics",
                "domains": "critiquebench.domains"}  # fmt: skip

__all__ = [
    "ENTRY_POINTS",
    # schemes: the loops the built-in schemes are made of, their parameters, what a run costs
    "verified_loop",
    "critic_loop",
    "Calls",
    "critic_calls",
    "Param",
    "rounds",
    "feedback",
    "critic",
    "votes",
    "samples",
    "temperature",
    "style",
    "history",
    # critics and domains: the domain contract (core and the capabilities a domain opts into)
    "Domain",
    "Instance",
    "Verdict",
    "LLMVerdict",
    "Judgement",
    "Unsupported",
    "Judged",
    "SelfCritiqued",
    "Candidates",
    "Prompted",
    "FromFolder",
    # a built-in domain to extend
    "Game24",
]
