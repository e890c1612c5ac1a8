"""Forgetting on purpose: a session or a text erased from every copy we keep, and kept
out afterwards (:mod:`.plan`: what goes where and erasing it; :mod:`.deny`: the denylist
and the hooks the index, the vault and the team push call; :mod:`.record`: the forget log;
:mod:`.ours`: the trash, journal, history and saved searches; :mod:`.secrets`: likely
secrets in what we keep). Kept light: the hooks import :mod:`.deny` alone."""
