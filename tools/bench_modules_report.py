#!/usr/bin/env python3
"""Renders the results of tools/bench-modules.sh into docs/BENCHMARKS.md.

Usage: bench_modules_report.py WORK_DIR DOCUMENT. The document has one generated block for the
machine and one per module, each between `<!-- bench-modules.sh: KEY from here -->` and
`<!-- bench-modules.sh: KEY up to here -->`; only those blocks are replaced (a module whose
scenarios did not run keeps its block), and the analysis around them is kept.
"""
import json
import sys
from pathlib import Path

from bench_report import commands_section, fmt, load, machine_table, measured_line, median, splice


def markers(key):
    return (f"<!-- bench-modules.sh: {key} from here -->", f"<!-- bench-modules.sh: {key} up to here -->")


def spread(runs, key, digits=0):
    """The median, with the lowest and highest run when there were several."""
    values = [run[key] for run in runs if run.get(key) is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return fmt(values[0], digits)
    return f"{fmt(median(runs, key), digits)} ({fmt(min(values), digits)} – {fmt(max(values), digits)})"


def loads(runs):
    values = [run["loadavg_1m"] for run in runs if run.get("loadavg_1m") is not None]
    return f"{min(values):.1f} – {max(values):.1f}" if values else "–"


def worst_lost(runs):
    return max(run.get("lost", 0) for run in runs)


def footer(names, by_name, commands):
    """The load range, the commands of the module's scenarios and their raw lines."""
    runs = [run for name in names for run in by_name.get(name, [])]
    out = [f"Load average (1 min) during these runs: {loads(runs)}.", ""]
    out += commands_section("Commands (each against a fresh release server, `--no-rate-limits`):",
                            [(name, command) for name, command in commands if name in names])
    out += ["<details><summary>Raw output, one JSON line per run</summary>", "", "```json"]
    out += [json.dumps(run, separators=(",", ":")) for run in runs]
    out += ["```", "", "</details>", ""]
    return out


def presence(by_name):
    runs = by_name["presence-10k"]
    users = runs[0]["users"]
    per_member = [dict(run, frames_per_member=run["presence_frames"] / run["users"],
                       snapshot_users_per_member=run["snapshot_users"] / run["users"],
                       interval_frames_per_member=run["interval_frames"] / run["users"]) for run in runs]
    rows = [
        ("users joining one message channel (presence + message features)", fmt(users)),
        ("time per join: all subscribes answered and every snapshot arrived, ÷ users (µs)",
         spread(runs, "join_us_per_user", 1)),
        ("server CPU per join (µs)", spread(runs, "join_server_cpu_us_per_user", 1)),
        ("subscribe answer p50 / p99, 256 in flight (ms)",
         f"{fmt(median(runs, 'join_answer_p50_ms'), 2)} / {fmt(median(runs, 'join_answer_p99_ms'), 2)}"),
        ("time per setState, all answered ÷ users (µs)", spread(runs, "set_state_us_per_user", 1)),
        ("presence pushes received per member (KB)", spread(runs, "presence_kb_per_member", 1)),
        ("presence frames per member: all / snapshot parts / interval parts",
         f"{fmt(median(per_member, 'frames_per_member'), 1)} / {fmt(median(per_member, 'snapshot_frames') / users, 1)}"
         f" / {fmt(median(per_member, 'interval_frames_per_member'), 1)}"),
        ("users listed in a member's snapshot (mean)", spread(per_member, "snapshot_users_per_member", 0)),
        ("real-time join events (all members)", spread(runs, "realtime_events")),
        ("interval events: joins / states listed (all members)",
         f"{fmt(median(runs, 'interval_joins'))} / {fmt(median(runs, 'interval_states'))}"),
        ("presence pushes, all members (MB)", spread(runs, "presence_mb", 0)),
        ("last setState answered → every member heard everything (s)", spread(runs, "interval_wait_s", 1)),
        ("first → last interval part carrying users, over all members (s)",
         spread(runs, "interval_delivery_spread_s", 1)),
        ("server RSS: fresh / logged in / joined / after the interval events (MB)",
         " / ".join(fmt(median(runs, f"server_rss_{moment}_mb"), 1)
                    for moment in ("before", "logged_in", "joined", "heard"))),
        ("server RSS growth per user, logged in → after the interval events (bytes)",
         spread(runs, "server_rss_presence_bytes_per_user")),
        ("whoNow pages/s, 100 users a page, without states", spread(runs, "whonow_without_state_pages_per_s")),
        ("whoNow pages/s, with states", spread(runs, "whonow_with_state_pages_per_s")),
        ("whoNow page p50 / p99 without states (ms)",
         f"{fmt(median(runs, 'whonow_without_state_p50_ms'), 2)} / {fmt(median(runs, 'whonow_without_state_p99_ms'), 2)}"),
        ("whoNow page p50 / p99 with states (ms)",
         f"{fmt(median(runs, 'whonow_with_state_p50_ms'), 2)} / {fmt(median(runs, 'whonow_with_state_p99_ms'), 2)}"),
        ("server CPU while paging, without / with states (cores)",
         f"{fmt(median(runs, 'whonow_without_state_server_cpu_cores'), 2)} / "
         f"{fmt(median(runs, 'whonow_with_state_server_cpu_cores'), 2)}"),
        ("lost: joins or states a member did not hear, wrong states, bad pages (worst run)", str(worst_lost(runs))),
    ]
    out = ["Lowest – highest run in brackets.", "", "| measure | value |", "| --- | ---: |"]
    out += [f"| {label} | {value} |" for label, value in rows]
    out.append("")
    return out


def scenario_table(columns, scenarios, by_name, cells):
    """A table with one row per scenario that ran: its label, then `cells(runs)`."""
    out = ["| scenario | " + " | ".join(columns) + " |", "| --- |" + " ---: |" * (len(columns) - 1) + " --- |"]
    for name, label in scenarios:
        if by_name.get(name):
            out.append(f"| {label} | " + " | ".join(cells(by_name[name])) + " |")
    out.append("")
    return out


STORAGE = [
    ("storage-write-1", "setChannelMetadata, 1 writer"),
    ("storage-write-16", "setChannelMetadata, 16 writers"),
    ("storage-read-1", "getChannelMetadata, 1 reader"),
    ("storage-read-16", "getChannelMetadata, 16 readers"),
    ("storage-events-1w", "events to 100 subscribers, 1 writer"),
    ("storage-events-16w", "events to 100 subscribers, 16 writers"),
]


def storage(by_name):
    def cells(runs):
        events = runs[0]["receivers_per_publish"] > 0

        def event(key, digits=0):
            return fmt(median(runs, key), digits) if events else "–"
        return [fmt(median(runs, "publishes_per_s")), fmt(median(runs, "answer_p50_ms"), 2),
                fmt(median(runs, "answer_p99_ms"), 2), event("deliveries_per_s"), event("latency_p50_ms", 2),
                event("latency_p99_ms", 2), event("superseded"), str(worst_lost(runs)),
                fmt(median(runs, "server_cpu_cores"), 2), loads(runs)]
    return scenario_table(
        ["requests/s", "answer p50 ms", "answer p99 ms", "events/s", "write → event p50 ms", "write → event p99 ms",
         "superseded", "lost", "server CPU (cores)", "load"], STORAGE, by_name, cells)


TOPICS = [
    ("fanout-max", "message channel, as fast as answered"),
    ("topic-fanout-max", "stream channel topic, as fast as answered"),
    ("fanout-200", "message channel, 200 msg/s"),
    ("topic-200", "stream channel topic, 200 msg/s"),
]


def topics(by_name):
    def cells(runs):
        per_delivery = [dict(run, ns=run["server_cpu_cores"] / run["deliveries_per_s"] * 1e9) for run in runs
                        if run.get("server_cpu_cores") is not None and run.get("deliveries_per_s")]
        return [fmt(median(runs, "publishes_per_s")), fmt(median(runs, "deliveries_per_s")),
                fmt(median(runs, "latency_p50_ms"), 2), fmt(median(runs, "latency_p99_ms"), 2),
                fmt(median(runs, "latency_p999_ms"), 2), str(worst_lost(runs)),
                fmt(median(runs, "server_cpu_cores"), 2), fmt(median(per_delivery, "ns")), loads(runs)]
    out = scenario_table(
        ["publishes/s", "deliveries/s", "p50 ms", "p99 ms", "p99.9 ms", "lost", "server CPU (cores)",
         "server CPU ns per delivery", "load"], TOPICS, by_name, cells)
    pairs = list(zip(by_name.get("fanout-max", []), by_name.get("topic-fanout-max", [])))
    if pairs:
        ratios = [topic["deliveries_per_s"] / message["deliveries_per_s"] for message, topic in pairs]
        out += [f"Topic ÷ message deliveries per second, round by round (the two ran alternately): "
                f"{', '.join(f'{ratio:.2f}' for ratio in ratios)}.", ""]
    return out


LOCKS = [
    ("lock-10", "10 contenders"),
    ("lock-100", "100 contenders"),
]


def locks(by_name):
    def cells(runs):
        return [fmt(median(runs, "pairs_per_s")), fmt(median(runs, "handover_p50_ms"), 3),
                fmt(median(runs, "handover_p99_ms"), 3), fmt(median(runs, "wait_p50_ms"), 2),
                fmt(median(runs, "wait_p99_ms"), 2), str(max(run["double_holds"] for run in runs)),
                str(max(run["token_regressions"] for run in runs)), str(worst_lost(runs)),
                fmt(median(runs, "server_cpu_cores"), 2), fmt(median(runs, "server_cpu_us_per_pair"), 1), loads(runs)]
    return scenario_table(
        ["acquire/release pairs/s", "hand-over p50 ms", "hand-over p99 ms", "acquire → held p50 ms",
         "acquire → held p99 ms", "double holds", "token regressions", "lost", "server CPU (cores)",
         "server CPU µs per pair", "load"], LOCKS, by_name, cells)


MODULES = [
    ("presence", ["presence-10k"], presence),
    ("storage", [name for name, _ in STORAGE], storage),
    ("topics", [name for name, _ in TOPICS], topics),
    ("locks", [name for name, _ in LOCKS], locks),
]


def main():
    work, document = Path(sys.argv[1]), Path(sys.argv[2])
    machine, commands, results, by_name = load(work)
    begin, end = markers("machine")
    splice(document, begin, end, "\n".join([begin, ""] + machine_table(machine, results) + [end]))
    for key, names, table in MODULES:
        if not any(name in by_name for name in names):
            continue
        begin, end = markers(key)
        block = [begin, "", measured_line(machine), ""] + table(by_name) + footer(names, by_name, commands) + [end]
        splice(document, begin, end, "\n".join(block))


if __name__ == "__main__":
    main()
