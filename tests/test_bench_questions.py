"""The paraphrase question set and ``bench --questions``.

The checks of the set itself run over the real corpus sources (the SGD dialogues beside the
repository and the installed chitchat data): every target is a source conversation, and no
question holds a rare word of its target. The measurement runs end to end on a small real
corpus with a question set written here.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from session_browser.bench.config import BenchError
from session_browser.bench.corpus import build_corpus
from session_browser.bench.data import (
    chitchat_dataset_path,
    iter_sgd_conversations,
    load_chitchat_conversations,
)
from session_browser.bench.paraphrase import (
    RARE_DF_SHARE,
    SPLITS,
    Question,
    QuestionsOptions,
    SessionBM25,
    Vocabulary,
    content_words,
    conversation_vocabulary,
    format_questions_report,
    leaked_words,
    load_questions,
    rank_of,
    rare_limit,
    readable_sessions,
    resolve_targets,
    run_questions_bench,
    session_text,
)
from session_browser.bench.sessions import conversation_key, tokenize
from session_browser.cli import main


def set_problems(questions: list[Question], vocab: Vocabulary) -> list[str]:
    """What is wrong with a question set over a corpus: targets that are no conversation of
    it, and questions that give a rare word of their target away."""
    problems: list[str] = []
    for q in questions:
        words = vocab.words.get(q.target)
        if words is None:
            problems.append(f"{q.target}: not a conversation of the corpus")
            continue
        leaked = leaked_words(q.question, words, vocab.df, vocab.limit)
        if leaked:
            problems.append(f"{q.target}: rare word(s) {', '.join(leaked)} in {q.question!r}")
    return problems


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    """Document frequency over every source conversation of the SGD + chitchat corpus."""
    from tests.conftest import SHARED_DATA

    sgd = SHARED_DATA / "sgd_dialogues.jsonl.gz"
    chitchat = chitchat_dataset_path()
    if not sgd.is_file() or chitchat is None:
        pytest.skip("needs the SGD data in ../shared/data and the chitchat_dataset package")
    convs = itertools.chain(iter_sgd_conversations(sgd), load_chitchat_conversations(chitchat))
    return conversation_vocabulary(convs, {q.target for q in load_questions()})


def test_the_set_is_large_split_in_halves_and_targets_conversations() -> None:
    questions = load_questions()
    assert len(questions) >= 120
    counts = {s: sum(1 for q in questions if q.split == s) for s in SPLITS}
    assert abs(counts["tune"] - counts["held-out"]) <= 1, counts
    assert len({q.target for q in questions}) == len(questions)
    for q in questions:
        # a conversation key: the same at every corpus size (no -copyN / -partN suffix)
        assert conversation_key(q.target) == q.target
        assert q.target.startswith(("sgd-", "chitchat-")), q.target
        assert len(content_words(q.question)) >= 3, q.question
    # both kinds of session are asked about, in both splits
    for split in SPLITS:
        kinds = {q.target.split("-")[0] for q in questions if q.split == split}
        assert kinds == {"sgd", "chitchat"}


def test_every_target_resolves_and_no_question_leaks_a_rare_word(vocabulary: Vocabulary) -> None:
    assert vocabulary.conversations > 20000
    assert vocabulary.limit == max(5, math.ceil(RARE_DF_SHARE * vocabulary.conversations))
    assert set_problems(load_questions(), vocabulary) == []


def test_a_planted_rare_word_is_caught(vocabulary: Vocabulary) -> None:
    questions = load_questions()
    victim = questions[0]
    words = vocabulary.words[victim.target]
    rarest = min((w for w in words if w.isalpha()), key=lambda w: (vocabulary.df[w], w))
    assert vocabulary.df[rarest] <= vocabulary.limit
    planted = Question(victim.target, f"{victim.question} {rarest.upper()}", victim.split)
    problems = set_problems([planted, *questions[1:]], vocabulary)
    assert len(problems) == 1
    assert problems[0].startswith(f"{victim.target}: rare word(s) {rarest} ")
    # a common word of the same session is no leak
    common = max(words, key=lambda w: vocabulary.df[w])
    assert vocabulary.df[common] > vocabulary.limit
    fair = Question(victim.target, f"{victim.question} {common}", victim.split)
    assert set_problems([fair], vocabulary) == []


def test_rare_limit_and_leaks_by_document_frequency() -> None:
    assert rare_limit(100) == 5
    assert rare_limit(24361) == 49
    df = {"paddle": 2, "stripe": 60, "billing": 900}
    target = {"paddle", "stripe", "billing", "march"}
    assert leaked_words("Billing via PADDLE in Stripe?", target, df, 49) == ["paddle"]
    assert leaked_words("what about the paddle boat", {"stripe"}, df, 49) == []


def test_a_bad_question_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    good = {"target": "sgd-x", "question": "which hotel did I book", "split": "tune"}
    for bad, needle in (
        ("{not json", "line 2: not JSON"),
        (json.dumps(good | {"split": "train"}), "line 2: split must be"),
        (json.dumps(good | {"question": " "}), "line 2: no question"),
        (json.dumps(good), "line 2: target sgd-x asked twice"),
        ("[1]", "line 2: not a JSON object"),
    ):
        path.write_text(json.dumps(good) + "\n" + bad + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=needle):
            load_questions(path)


def test_content_words_drop_stop_and_question_words() -> None:
    assert content_words("What did we decide about the billing migration?") == [
        "billing",
        "migration",
    ]
    assert content_words("which restaurant did I book in Oakland, the Thai one") == [
        "restaurant",
        "book",
        "oakland",
        "thai",
    ]


def test_session_bm25_ranks_by_coverage(tmp_path: Path) -> None:
    bm25 = SessionBM25(tmp_path / "bm25.db")
    bm25.add_all(
        [
            ("a", "we moved the invoices from stripe to paddle in march"),
            ("b", "the march budget meeting, nothing about invoices"),
            ("c", "a long screenplay " + "words and more words " * 200),
        ]
    )
    assert bm25.search("moving invoices to paddle in march?") == ["a", "b"]
    assert bm25.search("the of and") == []
    # both hold both words: the shorter one first (length normalised)
    assert bm25.search("march invoices") == ["b", "a"]
    assert rank_of(["c", "b"], {"b"}) == 2
    assert rank_of(["c"], {"b"}) is None
    bm25.close()


def _small_corpus_questions(home: Path, sessions: int) -> tuple[list[dict[str, str]], str]:
    """A question set for the corpus built at ``home``: for four of its conversations the
    rarest words of one session (a known item), plus one target the corpus does not hold."""
    sessions_found = list(readable_sessions(home / "sessions"))
    df: dict[str, int] = {}
    texts: dict[str, str] = {}
    for sid, data in sessions_found:
        text = session_text(data)
        texts[sid] = text
        for w in set(tokenize(text)):
            df[w] = df.get(w, 0) + 1
    rows: list[dict[str, str]] = []
    for sid in sorted(texts)[:: max(1, len(texts) // 4)][:4]:
        words = sorted(
            {w for w in tokenize(texts[sid]) if w.isalpha() and len(w) > 3},
            key=lambda w: (df[w], w),
        )[:4]
        rows.append(
            {
                "target": conversation_key(sid),
                "question": " ".join(words),
                "split": SPLITS[len(rows) % 2],
            }
        )
    absent = "sgd-train-0_99999"
    rows.append({"target": absent, "question": "a hotel in nowhere", "split": "tune"})
    return rows, absent


def test_the_questions_bench_end_to_end(tmp_path: Path, shared_data: Path) -> None:
    sessions = 120
    probe = build_corpus(tmp_path / "probe", sessions=sessions, seed=7)
    rows, absent = _small_corpus_questions(probe.home, sessions)
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    said: list[str] = []
    report = run_questions_bench(
        QuestionsOptions(sessions=sessions, seed=7, workdir=work, questions=qfile, known_items=12),
        said.append,
    )
    assert list(work.iterdir()) == []  # the work dir is removed
    assert report["corpus"]["sessions"] == probe.session_count
    qs = report["questions"]
    assert (qs["total"], qs["resolved"], qs["missing"]) == (5, 4, [absent])
    assert qs["by_split"] == {"tune": 2, "held-out": 2}
    assert set(report["engines"]) == {"ours", "bm25", "recall", "gated"}
    assert report["known_items"] == 12
    for engine in report["engines"].values():
        splits = engine["splits"]
        assert splits["all"]["n"] == 4 and splits["all"]["errors"] == 0
        assert splits["tune"]["n"] + splits["held-out"]["n"] == 4
        assert splits["all"]["latency"]["n"] == 4
        assert {a["target"] for a in engine["answers"]} == {r["target"] for r in rows[:4]}
        assert engine["known"]["n"] == 12 and engine["known"]["errors"] == 0
    # the session's own rarest words: a plain BM25 and the experiment find every one first
    assert report["engines"]["bm25"]["splits"]["all"]["rank1"] == 1.0
    assert report["engines"]["recall"]["splits"]["all"]["rank1"] == 1.0
    for engine in report["engines"].values():
        assert engine["hubs"] == {}  # four questions, four different targets
    # a known item has a message holding all its words: the gated engine answers it as ours
    ours, gated = report["engines"]["ours"], report["engines"]["gated"]
    assert [a["rank"] for a in gated["answers"]] != [None] * 4
    assert {k: gated["known"][k] for k in ("rank1", "recall10", "mrr")} == {
        k: ours["known"][k] for k in ("rank1", "recall10", "mrr")
    }
    text = format_questions_report(report)
    assert "plain session BM25 (reference)" in text
    assert "lexical recall (experiment)" in text
    assert "12 known-item queries" in text
    assert "4 of 5 targets in this corpus" in text
    assert any("asking 4 questions" in line for line in said)
    relevant = resolve_targets(
        [Question(r["target"], r["question"], r["split"]) for r in rows],
        (sid for sid, _ in readable_sessions(probe.sessions_dir)),
    )
    assert absent not in relevant and len(relevant) == 4


def test_no_target_in_the_corpus_is_an_error(tmp_path: Path, shared_data: Path) -> None:
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text(
        json.dumps({"target": "sgd-none", "question": "a b c", "split": "tune"}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(BenchError, match="no question's target is in this corpus"):
        run_questions_bench(QuestionsOptions(sessions=30, workdir=tmp_path, questions=qfile))
    assert [p.name for p in tmp_path.iterdir()] == ["questions.jsonl"]


@pytest.mark.parametrize(
    "extra",
    [["--store", "."], ["--pi"], ["--no-sgd"], ["--index", "postgresql://x/y"], ["--mcp"]],
)
def test_cli_refuses_questions_with_another_corpus(extra: list[str]) -> None:
    result = CliRunner().invoke(main, ["bench", "--questions", *extra])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    assert "--questions measures the built SGD + chitchat corpus" in lines[0]


def test_hub_wins_count_wrong_first_places() -> None:
    from session_browser.bench.paraphrase import hub_wins

    answers = [{"top": "hub", "rank": None}] * 3 + [
        {"top": "hub", "rank": 1},  # it answers this one: no hub win
        {"top": "other", "rank": 4},
        {"top": None, "rank": None},
    ]
    assert hub_wins(answers) == {"hub": 3}
    assert hub_wins(answers[1:]) == {}


def test_the_questions_bench_in_hybrid_mode(tmp_path: Path, shared_data: Path) -> None:
    try:
        from session_browser.core.embed import load_minilm

        load_minilm()
    except Exception as exc:  # EmbedderUnavailable: the semantic extra is not installed
        pytest.skip(f"the semantic extra is not installed: {exc}")
    from session_browser.bench.paraphrase import HYBRID_ENGINES

    sessions = 120
    probe = build_corpus(tmp_path / "probe", sessions=sessions, seed=7)
    rows, _absent = _small_corpus_questions(probe.home, sessions)
    qfile = tmp_path / "questions.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    report = run_questions_bench(
        QuestionsOptions(
            sessions=sessions,
            seed=7,
            workdir=work,
            questions=qfile,
            known_items=12,
            engines=HYBRID_ENGINES,
        )
    )
    assert set(report["engines"]) == {"ours", "hybrid", "meaning", "bm25"}
    ours, hybrid = report["engines"]["ours"], report["engines"]["hybrid"]
    meaning = report["engines"]["meaning"]
    assert meaning["splits"]["all"]["errors"] == 0
    # the ceiling: first in either ranking, as the two engines' own answers say
    ranks = {a["target"]: a["rank"] for a in meaning["answers"]}
    either = [1 in (a["rank"], ranks[a["target"]]) for a in ours["answers"]]
    assert report["ceiling"]["either_first"] == pytest.approx(sum(either) / len(either))
    assert report["ceiling"]["either_first"] >= max(
        ours["splits"]["all"]["rank1"], meaning["splits"]["all"]["rank1"]
    )
    assert hybrid["splits"]["all"]["errors"] == 0 and hybrid["known"]["errors"] == 0
    # known items rank no worse in hybrid mode
    assert hybrid["known"]["rank1"] >= ours["known"]["rank1"]
    assert hybrid["known"]["recall10"] >= ours["known"]["recall10"]
    cost = report["embedding"]
    # every readable session embedded (the same corpus as the probe: the same seed and size)
    assert cost["sessions"] == len(list(readable_sessions(probe.sessions_dir)))
    assert cost["windows"] >= cost["sessions"] and cost["bytes"] > 0
    assert 0 < cost["bytes_to_json"] < 0.5
    assert 0 < cost["peak_rss_bytes"] < 600e6
    assert cost["seconds_per_100k_messages"] > 0
    text = format_questions_report(report)
    assert "ours, hybrid mode" in text and "ours, lexical mode" in text
    assert "meaning alone" in text and "either ranking" in text
    assert "embedding (all-MiniLM-L6-v2, 2 worker process(es)" in text
    assert "per 100k messages" in text and "peak memory" in text


def test_cli_refuses_mode_without_questions() -> None:
    result = CliRunner().invoke(main, ["bench", "--mode", "hybrid", "--only", "ours"])
    assert result.exit_code != 0
    assert "--mode applies to --questions" in result.output
