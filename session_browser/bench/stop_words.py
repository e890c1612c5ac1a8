"""The words a question or a session holds that carry no content, which the questions bench
(:mod:`.paraphrase`) and the lexical-recall experiment (:mod:`.lexical_recall`) both set
aside."""

from __future__ import annotations

#: Words that carry no content in a question: English function words, the words people use to
#: ask ("what did we decide about..."), and chat filler.
_STOP_TEXT = """
    a about above after again against all also am an and any are aren as at be because been
    before being below between both but by can cannot could couldn d did didn do does doesn doing
    don down during each else ever few for from further get got had hadn has hasn have haven
    having he her here hers herself him himself his how i if in into is isn it its itself just
    ll m me might more most much must mustn my myself no nor not now o of off on once one only or
    other ought our ours ourselves out over own re s same shan she should shouldn so some such t
    than that the their theirs them themselves then there these they this those through to too
    under until up upon us ve very was wasn we were weren what when where which while who whom
    whose why will with won would wouldn y you your yours yourself yourselves
    ask asked asking back decide decided did remember recall said say talk talked talking tell
    thing things think thought time times told way went ago earlier last ones someone something
    anything really actually maybe like
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
