"""The report: the targets (measured, never asserted) and the table ``bench.py`` prints."""

from __future__ import annotations

from typing import Any

from benchmarks.common import ENV_ID


def _fmt(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 1:
        return f"{x:,.2f}"
    return f"{x:.3g}"


def targets(results: dict) -> dict:
    out: dict[str, Any] = {}
    spiel = results.get("openspiel", {})
    single = results["single_env"]["gym_make"]["steps_per_s"]["median"]
    if spiel.get("available"):
        ratio = single / spiel["steps_per_s"]["median"]
        out["single_env_vs_openspiel"] = {"what": "one gym.make env's steps/s over OpenSpiel solitaire's",
                                          "target": ">= 2x", "measured": ratio, "met": ratio >= 2.0}
    big = [v for k, v in results["vector_env"]["by_num_envs"].items() if int(k) >= 1024]
    if big:
        best = max(v["env_steps_per_s"]["median"] for v in big)
        out["vector_env_steps_per_s_at_1024_plus"] = {
            "what": "best batched-env env-steps/s at N >= 1024, obs and masks, a compiled uniform pick included",
            "target": ">= 1M/s",
            "measured": best, "met": best >= 1_000_000,
            "step_only_measured": max(v["step_only_env_steps_per_s"]["median"] for v in big),
        }
    options = results.get("options")
    if options and options["num_envs"] >= 1024:
        ratio = options["no_revisit_ratio_at_num_envs"]
        out["no_revisit_vs_default_at_1024"] = {
            "what": "batched env with no_revisit=True, env.step env-steps/s over the default env's (N = 1024)",
            "target": ">= 0.7x", "measured": ratio, "met": ratio >= 0.7}
        if "no_revisit_same_games_ratio_at_num_envs" in options:
            ratio = options["no_revisit_same_games_ratio_at_num_envs"]
            out["no_revisit_vs_default_same_games_at_1024"] = {
                "what": "the same, the default env playing the same moves from the same deals (the option's own cost)",
                "target": ">= 0.7x", "measured": ratio, "met": ratio >= 0.7}
    state = results["memory"]["state_bytes_per_game"]
    out["state_bytes_per_game"] = {"what": "bytes of one game's state array", "target": "<= 1 KiB",
                                   "measured": state, "met": state <= 1024}
    first = results.get("first_use", {})
    if "cold" in first:
        cold = first["cold"]["total_s"]["median"]
        warm = first["warm"]["total_s"]["median"]
        out["first_use_cold_s"] = {"what": "import + gym.make + reset + step, empty numba cache (in process)",
                                   "target": "<= 10 s", "measured": cold, "met": cold <= 10,
                                   "process_wall_s": first["cold"]["process_wall_s"]["median"]}
        out["first_use_warm_s"] = {"what": "import + gym.make + reset + step, filled numba cache (in process)",
                                   "target": "<= 1 s", "measured": warm, "met": warm <= 1,
                                   "process_wall_s": first["warm"]["process_wall_s"]["median"]}
    return out


def table(results: dict) -> str:
    rows: list[tuple[str, str, str]] = []

    def add(label: str, value: float | str, unit: str = "") -> None:
        rows.append((label, value if isinstance(value, str) else _fmt(value), unit))

    def med(d: dict) -> float:
        return d["median"]

    def busy(sec: dict) -> str:
        x = sec.get("other_processes_cores")
        return f"  [other processes busy: {x:.2f} cores]" if x is not None and x > 0.05 else ""

    m = results["machine"]
    s = results["settings"]
    lines = [
        f"solitaire-env benchmark ({'quick' if s['quick'] else 'full'} run): {ENV_ID}",
        f"machine: {m['cpu']}, {m['cores']} cores ({m['usable_cores']} usable, numba threads {m['numba_threads']}); "
        f"python {m['python']}, numpy {m['numpy']}, numba {m['numba']}, gymnasium {m['gymnasium']}, "
        f"open_spiel {m['open_spiel'] or 'not installed'}",
        f"each figure: median of {s['reps']} repetitions of ~{s['duration_s']} s; "
        f"load average at start {', '.join(f'{x:.2f}' for x in m['load_average_at_start'] or [])}",
    ]
    if m.get("nice"):
        lines.append(f"run at nice {m['nice']}")
    if m["env"]:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in m["env"].items()))
    other = m.get("other_processes_cores")
    if other is not None:
        lines.append(f"other processes kept {other:.2f} of {m['cores']} cores busy on average during the run")
        if other > 0.1:
            lines.append("WARNING: the machine was not quiet, so figures are low "
                         "(the batched env's numba threads suffer most)")
    lines.append("")
    e = results["engine"]
    rows.append((f"1. engine alone (numba random play; game = until stuck or {e['move_cap']} moves){busy(e)}", "", ""))
    add("  legal_mask + apply_action", med(e["numba"]["moves_per_s"]), "moves/s")
    add("  games", med(e["numba"]["games_per_s"]), f"games/s ({e['numba']['games_at_cap_fraction']:.1%} hit the cap)")
    add("  + observe every move", med(e["numba_with_observe"]["moves_per_s"]), "moves/s")
    add("  deal() (Python, every reset)", med(e["deals_per_s"]), "deals/s")
    add("  Python-driven via Game", med(e["python_game"]["moves_per_s"]), "moves/s")
    add("  Python-driven via Game", med(e["python_game"]["games_per_s"]), "games/s")
    se = results["single_env"]
    rows.append((f"2. one env, gym.make (default wrappers), obs + mask{busy(se)}", "", ""))
    add("  steps, cheap action pick + resets", med(se["gym_make"]["steps_per_s"]), "steps/s")
    add("  env.step alone", med(se["gym_make"]["step_only_steps_per_s"]), "steps/s")
    add("  unwrapped env, same loop", med(se["unwrapped"]["steps_per_s"]), "steps/s")
    add("  action_space.sample(mask=...) alone", med(se["action_space_sample_per_s"]), "calls/s")
    ve = results["vector_env"]
    rows.append((f"3. batched vector env, gym.make_vec (truncation at {ve['max_episode_steps']}){busy(ve)}", "", ""))
    for k, r in ve["by_num_envs"].items():
        add(f"  N={k:>5}: with action pick", med(r["env_steps_per_s"]), "env-steps/s")
        add(f"  N={k:>5}: env.step alone", med(r["step_only_env_steps_per_s"]), "env-steps/s")
        add(f"  N={k:>5}: action pick", med(r["action_select_ns_per_env_step"]), "ns/env-step")
        add(f"  N={k:>5}: autoreset, per sub-env", med(r["autoreset_us_per_sub_env"]),
            f"us (the step resetting all N: {r['autoreset_step_s'] * 1e3:,.1f} ms)")
        add(f"  N={k:>5}: batched.step_batch alone", med(r["kernel_only_env_steps_per_s"]), "env-steps/s")
        for name in ("serial", "parallel"):
            if f"kernel_{name}_env_steps_per_s" in r:
                add(f"  N={k:>5}: batched.step_batch_{name} alone", med(r[f"kernel_{name}_env_steps_per_s"]),
                    "env-steps/s")
    sp = results["openspiel"]
    if sp.get("available"):
        rows.append((f"4. OpenSpiel {sp['game']} from Python (mask + observation_tensor each step){busy(sp)}", "", ""))
        add("  steps, cheap action pick", med(sp["steps_per_s"]), "steps/s")
        add("  step alone (mask + obs + apply)", med(sp["step_only_steps_per_s"]), "steps/s")
        single = med(se["gym_make"]["steps_per_s"])
        add("  ratio: one gym.make env / OpenSpiel", single / med(sp["steps_per_s"]), "x")
        for k, r in ve["by_num_envs"].items():
            add(f"  ratio: vector env N={k} / OpenSpiel", med(r["env_steps_per_s"]) / med(sp["steps_per_s"]), "x")
    else:
        rows.append((f"4. OpenSpiel: skipped ({sp.get('reason', '')})", "", ""))
    mem = results["memory"]
    rows.append((f"5. memory per game, batched env (N={mem['num_envs']})", "", ""))
    add("  state array", mem["state_bytes_per_game"], f"bytes ({mem['state_dtype']} {mem['state_shape'][1]})")
    add("  all per-env arrays", mem["per_env_arrays_bytes_per_game"], "bytes")
    if "no_revisit_history_bytes_per_game" in mem:
        add("  with no_revisit: the history table, at most", mem["no_revisit_history_bytes_per_game"],
            "bytes (allocated zeroed: pages cost when used)")
    add("  tracemalloc (make_vec + reset + step)", mem["tracemalloc_bytes_per_game"], "bytes")
    add("    of which one numpy Generator per env", mem["numpy_generator_bytes_per_game"], "bytes")
    if "rss_growth_bytes_per_game" in mem["rss"]:
        rss = mem["rss"]
        add(f"  RSS growth, fresh process, N={rss['num_envs']}", rss["rss_growth_bytes_per_game"], "bytes")
    fu = results["first_use"]
    if "cold" in fu:
        rows.append(("6. first use: import + gym.make + reset + step, fresh process", "", ""))
        add("  cold numba cache (in process)", med(fu["cold"]["total_s"]), "s")
        add("  cold numba cache (process wall)", med(fu["cold"]["process_wall_s"]), "s")
        add("  warm numba cache (in process)", med(fu["warm"]["total_s"]), "s")
        add("  warm numba cache (process wall)", med(fu["warm"]["process_wall_s"]), "s")
    else:
        rows.append((f"6. first use: skipped ({fu.get('skipped', '')})", "", ""))
    so = results.get("solver")
    if so:
        rows.append((f"7. solver, {so['nodes_per_solve']:,} positions per solve (deals it cannot settle){busy(so)}",
                     "", ""))
        for game in ("rank_and_file", "rainbow"):
            add(f"  {game} (deals {', '.join(map(str, so[game]['seeds']))})", med(so[game]["nodes_per_s"]),
                "positions/s")
    op = results.get("options")
    if op:
        rows.append((f"8. env options against the default env (env.step alone; games differ){busy(op)}", "", ""))
        for kind, label in (("vector_env", f"batched N={op['num_envs']}"), ("single_env", "single env")):
            for name, r in op[kind].items():
                add(f"  {label}, {name}", med(r["steps_per_s"]),
                    f"steps/s ({med(r['ratio_to_default']):.2f}x the default's)")
        for name, r in op.get("same_games", {}).items():
            add(f"  batched N={op['num_envs']}, {name}, the same games as the default env",
                f"{med(r['ratio_to_default']):.2f}", "x the default's speed")
    t = results["targets"]
    if t:
        rows.append(("targets (measured, not asserted)", "", ""))
        for k, v in t.items():
            rows.append((f"  {k} {v['target']}", _fmt(v["measured"]), "met" if v["met"] else "NOT met"))
    w0 = max(len(r[0]) for r in rows if r[1] or r[2])
    w1 = max(len(r[1]) for r in rows)
    for label, value, unit in rows:
        if not value and not unit:
            lines.append(label)
        else:
            lines.append(f"{label:<{w0}}  {value:>{w1}}  {unit}".rstrip())
    lines.append(f"total run time {results['settings']['total_s']:.1f} s")
    return "\n".join(lines)

