"""``benchmarks/eager_causes.py``: every cause a rule names exists and points
at a section of ``benchmarks/eager_exceptions.md``; a flagged case gets the
floor, the constant-reference cause, the first matching rule, or None."""
import importlib.util
import pathlib
import re
import sys

_DIR = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(_DIR))
_spec = importlib.util.spec_from_file_location("eager_causes", _DIR / "eager_causes.py")
eager_causes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(eager_causes)


def test_every_rule_names_a_cause_with_a_section():
  sections = set(re.findall(r"^## (\d+)\.", (_DIR / "eager_exceptions.md").read_text(),
                            re.MULTILINE))
  for cause, (section, text) in eager_causes.CAUSES.items():
    assert section in sections, (cause, section)
    assert text
  for pattern, sizes, cause in eager_causes.RULES:
    assert cause in eager_causes.CAUSES, (pattern, cause)
    assert sizes is None or all(isinstance(s, str) for s in sizes)


def test_the_order_of_causes(monkeypatch):
  case = {"row": "jnp.sort_float32_axis0", "size": "10"}
  monkeypatch.setattr(eager_causes, "RULES", [("jnp.sort_*", ("10",), "front-end"),
                                              ("jnp.*", None, "jax-formulation")])
  assert eager_causes.cause_of(case, True, True) == "floor"
  assert eager_causes.cause_of(case, False, True) == "constant-reference"
  assert eager_causes.cause_of(case, False, False) == "front-end"
  assert eager_causes.cause_of(dict(case, size="1e6"), False, False) == "jax-formulation"
  assert eager_causes.cause_of(dict(case, row="lax.sort"), False, False) is None


def test_a_size_independent_case_takes_the_front_end_rules_at_any_size(monkeypatch):
  monkeypatch.setattr(eager_causes, "RULES", [("jnp.*", ("10",), "front-end")])
  small = {"row": "jnp.astype", "size": "10", "elements": 10, "openjax_s": 15e-6}
  flat = {"row": "jnp.astype", "size": "1e3", "elements": 1000, "openjax_s": 20e-6}
  grows = {"row": "jnp.astype", "size": "1e6", "elements": 10**6, "openjax_s": 400e-6}
  fixed = eager_causes.fixed_cost_cases([small, flat, grows])
  assert fixed == {id(flat)}
  assert eager_causes.cause_of(flat, False, False, id(flat) in fixed) == "front-end"
  assert eager_causes.cause_of(flat, False, False) is None
  assert eager_causes.cause_of(grows, False, False, id(grows) in fixed) is None
  # only the front-end causes extend to other sizes
  monkeypatch.setattr(eager_causes, "RULES", [("jnp.*", ("10",), "jax-formulation")])
  assert eager_causes.cause_of(flat, False, False, True) is None
