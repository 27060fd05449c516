#!/usr/bin/env python3
"""Renders the results of tools/bench.sh into the generated part of docs/BENCHMARKS.md.

Usage: bench_report.py WORK_DIR DOCUMENT. Replaces the text between the begin and end markers;
everything outside them (the analysis) is kept.
"""
import json
import statistics
import sys
from pathlib import Path

BEGIN = "<!-- bench.sh: generated from here -->"
END = "<!-- bench.sh: generated up to here -->"


def median(runs, key):
    values = [run[key] for run in runs if run.get(key) is not None]
    if not values:
        return None
    return statistics.median(values)


def fmt(value, digits=0):
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def any_true(runs, key):
    return any(run.get(key) for run in runs)


def load(work: Path):
    """The machine, the commands (name, command) and the results of one benchmark run, and the
    results grouped by label in run order."""
    machine = dict(line.split("\t", 1) for line in (work / "machine.tsv").read_text().splitlines())
    commands = [line.split("\t", 1) for line in (work / "commands.tsv").read_text().splitlines()]
    results = [json.loads(line) for line in (work / "results.jsonl").read_text().splitlines() if line.strip()]
    by_name = {}
    for result in results:
        by_name.setdefault(result["label"], []).append(result)
    return machine, commands, results, by_name


def measured_line(machine):
    """When and at which commit the results were measured."""
    return (f"Measured {machine['date']} at commit `{machine['commit']}`, median of "
            f"{machine['runs']} runs where a scenario ran more than once.")


def machine_table(machine, results):
    """The machine, and the load it was under while the results were measured."""
    out = ["| machine | |", "| --- | --- |"]
    for key in ("uname", "nproc", "cpu", "memory", "disk", "swift", "fd_limit"):
        if key in machine:
            out.append(f"| {key} | `{machine[key]}` |")
    loads = [r.get("loadavg_1m") for r in results if r.get("loadavg_1m") is not None]
    if loads:
        out.append(f"| load average during runs | {min(loads):.1f} – {max(loads):.1f} "
                   "(other work shared the machine) |")
    out.append("")
    return out


def commands_section(intro, commands):
    """The load generator's command line of each scenario, once each."""
    out = [intro, "", "```"]
    seen = set()
    for name, command in commands:
        if name in seen:
            continue
        seen.add(name)
        out.append(f"# {name}")
        out.append(command)
    out.append("```")
    out.append("")
    return out


def raw_section(results):
    """Every JSON line, folded away."""
    out = ["<details><summary>Raw output, one JSON line per run</summary>", "", "```json"]
    out.extend(json.dumps(run, separators=(",", ":")) for run in results)
    out += ["```", "", "</details>", ""]
    return out


def splice(document: Path, begin: str, end: str, generated: str):
    """Replaces the text between `begin` and `end` in `document` (appending both when absent)."""
    text = document.read_text() if document.exists() else f"# Benchmarks\n\n{begin}\n{end}\n"
    if begin in text and end in text:
        text = text[: text.index(begin)] + generated + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + generated + "\n"
    document.write_text(text)


def render(work: Path) -> str:
    machine, commands, results, by_name = load(work)
    out = [BEGIN, ""]
    out += [measured_line(machine), ""] + machine_table(machine, results)

    traffic = [(name, runs) for name, runs in by_name.items() if runs[0]["scenario"] != "idle"]
    out.append("### Traffic")
    out.append("")
    out.append("| scenario | connections | publishes/s | deliveries/s | p50 ms | p99 ms | p99.9 ms | lost "
               "| server CPU (cores) | server CPU ns per delivery | server RSS MB | bench CPU (cores) | bench saturated | machine saturated |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
    for name, runs in traffic:
        lost = max(run["lost"] for run in runs)
        out.append(
            f"| {name} | {fmt(runs[0]['connections'])} | {fmt(median(runs, 'publishes_per_s'))} "
            f"| {fmt(median(runs, 'deliveries_per_s'))} | {fmt(median(runs, 'latency_p50_ms'), 2)} "
            f"| {fmt(median(runs, 'latency_p99_ms'), 2)} | {fmt(median(runs, 'latency_p999_ms'), 2)} | {lost} "
            f"| {fmt(median(runs, 'server_cpu_cores'), 2)} | {fmt(median(runs, 'server_cpu_ns_per_delivery'))} "
            f"| {fmt(median(runs, 'server_rss_mb'), 1)} "
            f"| {fmt(median(runs, 'bench_cpu_cores'), 2)} | {fmt(any_true(runs, 'bench_cpu_saturated'))} "
            f"| {fmt(any_true(runs, 'machine_cpu_saturated'))} |")
    churn = by_name.get("churn")
    if churn:
        run = churn[0]
        out.append("")
        out.append(f"Churn: {fmt(run.get('churn_logins_per_s'), 1)} login/subscribe/logout cycles per second "
                   f"(target {run.get('churn_rate_target')}), {run.get('churn_failures')} failed, while the "
                   "fan-out above ran.")
    out.append("")

    idle = [(name, runs) for name, runs in by_name.items() if runs[0]["scenario"] == "idle"]
    out.append("### Connections and memory")
    out.append("")
    out.append("| scenario | wanted | logged in | failed | logins/s | server RSS before MB | server RSS after MB "
               "| RSS per connection |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, runs in idle:
        run = runs[0]
        per = run.get("server_rss_per_connection_bytes")
        out.append(
            f"| {name} | {fmt(run['connections_wanted'])} | {fmt(run['connections'])} | {run['failed']} "
            f"| {fmt(run.get('logins_per_s'))} | {fmt(run.get('server_rss_before_mb'), 1)} "
            f"| {fmt(run.get('server_rss_mb'), 1)} | {fmt(per / 1024 if per is not None else None, 2)} KB |")
    out.append("")

    out.append("### Targets")
    out.append("")
    out.append("| target | measured | met |")
    out.append("| --- | --- | --- |")

    def target(label, measured, met):
        out.append(f"| {label} | {measured} | {'yes' if met else '**no**'} |")

    if "fanout-max" in by_name:
        value = median(by_name["fanout-max"], "deliveries_per_s")
        target("fan-out, 100 subscribers, 100 B: ≥ 1,000,000 deliveries/s", f"{fmt(value)}/s", value >= 1_000_000)
    if "fanout-1k" in by_name:
        value = median(by_name["fanout-1k"], "latency_p99_ms")
        target("1,000 msg/s to 100 subscribers: p99 ≤ 10 ms", f"{fmt(value, 2)} ms", value <= 10)
    if "idle-10k" in by_name:
        run = by_name["idle-10k"][0]
        per = run.get("server_rss_per_connection_bytes") or 0
        target("10,000 idle logged-in connections: ≤ 10 KB RSS each", f"{per / 1024:.2f} KB",
               per <= 10 * 1024 and run["failed"] == 0)
    if "connections-max" in by_name:
        run = by_name["connections-max"][0]
        target("50,000 concurrent logged-in connections", f"{fmt(run['connections'])} (fd limit {fmt(run['fd_limit'])})",
               run["connections"] >= 50_000)
    lost = sum(run.get("lost", 0) for run in results)
    target("no message lost", f"{lost} lost over every run", lost == 0)
    out.append("")

    out.append("### Commands")
    out.append("")
    out += commands_section(
        "`tools/bench.sh` starts `.build/release/switchboard serve --listen 127.0.0.1:PORT --no-rate-limits "
        "--log-level warning` afresh for each scenario and runs:", commands)
    out += raw_section(results)
    out.append(END)
    return "\n".join(out)


def main():
    work, document = Path(sys.argv[1]), Path(sys.argv[2])
    splice(document, BEGIN, END, render(work))


if __name__ == "__main__":
    main()
