from mlcost_lint.link.shell import program_of, split_script
from mlcost_lint.model.kubernetes import Container
from mlcost_lint.parse.document import Document


def _commands(command, args=()):
    c = Container(Document("x.yaml", 0, {}), (), command=list(command), args=list(args))
    return [[w.text for w in cmd.words] for cmd in program_of(c).commands], program_of(c)


def test_split_keeps_expansions_and_quotes_inside_words():
    tokens, ok = split_script('A=1 torchrun --nproc_per_node=$(NPROC) "t r.py" ${X}/a.yaml 2>&1 | tee log')
    assert ok
    assert tokens == ["A=1", "torchrun", "--nproc_per_node=$(NPROC)", "t r.py", "${X}/a.yaml", "2>&1", None,
                      "tee", "log"]


def test_unbalanced_quote_is_not_ok():
    tokens, ok = split_script('python "x.py')
    assert not ok and tokens == ["python", "x.py"]


def test_bash_c_script_becomes_simple_commands():
    cmds, _ = _commands(["/bin/bash", "-c"], ["set -ex; cd /w && NCCL_DEBUG=INFO exec torchrun --nproc_per_node 4 t.py 2>&1 | tee x.log"])
    assert cmds == [["set", "-ex"], ["cd", "/w"], ["torchrun", "--nproc_per_node", "4", "t.py"], ["tee", "x.log"]]


def test_nested_sh_c_and_line_continuation():
    cmds, _ = _commands(["sh", "-c", "sh -c 'deepspeed \\\n --num_gpus 2 x.py'"])
    assert cmds == [["deepspeed", "--num_gpus", "2", "x.py"]]


def test_background_and_loop_flags():
    _, program = _commands(["bash", "-lc", "for i in 0 1; do python a.py & done\nwait"])
    flags = [(c.words[0].text, c.background, c.in_loop) for c in program.commands]
    assert flags == [("python", True, True), ("wait", False, False)]
    assert program.has_control_flow


def test_plain_argv_is_one_command():
    cmds, _ = _commands(["python", "-u", "train.py"], ["--x", "1"])
    assert cmds == [["python", "-u", "train.py", "--x", "1"]]


def test_split_script_memo_returns_fresh_lists_and_stays_bounded(monkeypatch):
    """A text split again comes from the memo (a Slurm script is split for its
    exports and again for its commands): a caller that changes what it got
    back does not change what the next caller gets, and the memo drops its
    texts when it would hold more than its budget of characters."""
    import mlcost_lint.link.shell as shell

    monkeypatch.setattr(shell, "_SPLIT_MEMO_MAX_CHARS", 100)
    shell._SPLIT_MEMO.clear()
    shell._SPLIT_MEMO_CHARS[0] = 0
    text = "srun python train.py --lr 1\nexport A=1\n"
    starts: list[int] = []
    columns: list[int] = []
    first, ok = split_script(text, starts, columns)
    assert ok and first == ["srun", "python", "train.py", "--lr", "1", None, "export", "A=1", None]
    assert starts == [0, 0, 0, 0, 0, 0, 1, 1, 1] and columns == [0, 5, 12, 21, 26, 27, 0, 7, 10]
    first.append("changed")
    starts.clear()
    again, _ = split_script(text, starts)
    assert again == first[:-1] and starts == [0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert text in shell._SPLIT_MEMO
    split_script("x " * 40)           # 80 more characters: over the budget of 100
    assert text not in shell._SPLIT_MEMO and shell._SPLIT_MEMO_CHARS[0] == 80
    split_script("y" * 101)           # longer than the budget: not kept
    assert "y" * 101 not in shell._SPLIT_MEMO


def test_basename_is_posixpaths_for_every_word():
    import posixpath

    from hypothesis import given, strategies as st

    from mlcost_lint.link.shell import basename

    @given(st.text(alphabet="/ab.-_ \\$~", max_size=12))
    def same(word):
        assert basename(word) == posixpath.basename(word)

    same()
    assert [basename(w) for w in ("/usr/bin/torchrun", "torchrun", "a/", "/", "")] == ["torchrun", "torchrun", "", "", ""]
