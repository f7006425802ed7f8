"""Bug identity: messages normalized so one root cause is one signature."""

from dlfuzz.oracles.signature import make_signature, normalize_message


def test_numbers_addresses_paths_vanish_but_names_stay():
    a = normalize_message("index 12 is out of bounds for axis 0 at 0xdeadbeef in /a/b.so")
    b = normalize_message("index 7 is out of bounds for axis 2 at 0x1234 in /c/d.so")
    assert a == b
    assert "float32" in normalize_message("inputs float32")
    assert normalize_message("inputs float32") != normalize_message("inputs float16")


def test_first_line_only_and_quoted_values():
    assert normalize_message("bad value 'x'\ntraceback...") == normalize_message("bad value 'y'")


def test_signature_fields():
    s = make_signature("crash", "call", "torch", "cumsum", "SIGSEGV")
    assert s == "crash|call|torch|cumsum|SIGSEGV"


def test_generated_name_suffixes_do_not_split_bugs():
    a = normalize_message("cannot compile graph __inference_bound_793[_XlaMustCompile=true]")
    b = normalize_message("cannot compile graph __inference_bound_3376[_XlaMustCompile=true]")
    assert a == b
