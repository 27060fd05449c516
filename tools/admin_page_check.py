#!/usr/bin/env python3
"""Drives the admin page (GET / on the admin listener) in a real browser: Debian's chromium,
headless, through chromedriver, with PyPI's selenium.

  admin_page_check.py check --admin-port PORT --api-key KEY --app-id APP --channel CHANNEL --user USER [--lock LOCK]
      Checks the page's security headers and the API's (no caching, no sniffing, a CSP without
      inline script); loads the page on a link to APP's CHANNEL, gives the key; by the page's second
      refresh (a second apart: within two seconds of the key) the counters show a connection and
      CHANNEL lists USER among its members (and it is among the busiest channels); the nodes
      table lists this one node, ready, with the server's version, one connection and one session;
      then publishes the test message, revokes LOCK (with --lock) and kicks USER with their buttons
      (a revoke and a kick take two clicks). Prints one line per check; exits 0
      when all held, 1 otherwise, 2 when the browser could not run.
  admin_page_check.py screenshot --url WS_URL --admin-port PORT --api-key KEY --app-id APP --out FILE
      Connects a few protocol clients (tools/peer.py) with presence states, metadata, a lock and
      some traffic, opens the page on their busiest channel and one user, and saves a PNG.

Headless chromium runs with --no-sandbox (tests run as root in CI); selenium is given the
Debian binaries' paths, so it never looks for a driver of its own.
"""
import argparse
import asyncio
import http.client
import json
import os
import sys
import threading
import time
from urllib.parse import urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pydeps import require  # noqa: E402

require("selenium")

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

CHROMIUM = os.environ.get("SWITCHBOARD_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SWITCHBOARD_CHROMEDRIVER", "/usr/bin/chromedriver")
# The page refreshes every second: what it promises to show within two seconds of the key, it
# shows by its second refresh. Counted in refreshes, not measured in seconds of wall time, since a
# loaded machine (the whole test suite on two cores) can starve the browser for longer; the wall
# time is printed, and bounded by the tests' usual patience.
SHOWN_BY_REFRESH = 2
PATIENCE = 15.0


class Report:
    def __init__(self):
        self.failed = 0

    def check(self, name, condition, detail=""):
        print(("ok   " if condition else "FAIL ") + name + ("" if condition or not detail else f": {detail}"), flush=True)
        if not condition:
            self.failed += 1
        return condition


def browser(width=1280, height=900):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-extensions", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def wait_for(condition, timeout, interval=0.05):
    """`condition()`'s first true answer within `timeout` seconds, else its last answer."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            answer = condition()
        except StaleElementReferenceException:
            answer = None  # redrawn under us: ask again
        if answer or time.monotonic() >= deadline:
            return answer
        time.sleep(interval)


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, data


def check_headers(report, port, key):
    for path, kind in (("/", "text/html"), ("/admin.js", "text/javascript"), ("/admin.css", "text/css")):
        response, _ = request(port, "GET", path)
        policy = response.getheader("Content-Security-Policy", "")
        report.check(f"GET {path} is {kind}", response.status == 200 and response.getheader("Content-Type", "").startswith(kind),
                     f"{response.status} {response.getheader('Content-Type')}")
        report.check(f"GET {path}: CSP allows only the page's own script, none inline",
                     "script-src 'self'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy, policy)
        report.check(f"GET {path}: nosniff, no framing",
                     response.getheader("X-Content-Type-Options") == "nosniff" and "frame-ancestors 'none'" in policy)
    response, _ = request(port, "POST", "/api/counters", b"{}", {"Authorization": f"apikey {key}", "Content-Type": "application/json"})
    report.check("API answers are not cached nor sniffed",
                 response.status == 200 and response.getheader("Cache-Control") == "no-store"
                 and response.getheader("X-Content-Type-Options") == "nosniff",
                 f"{response.status} {response.getheaders()}")


def give_key(driver, port, key, view=""):
    driver.get(f"http://127.0.0.1:{port}/" + view)
    field = wait_for(lambda: driver.find_element(By.ID, "api-key").is_displayed() and driver.find_element(By.ID, "api-key"), 10)
    field.send_keys(key)
    driver.find_element(By.CSS_SELECTOR, "#login-form button").click()
    return time.monotonic()


def open_channel(driver, channel, timeout):
    def click():
        rows = driver.find_elements(By.CSS_SELECTOR, "#channels tbody tr")
        row = next((r for r in rows if r.get_attribute("data-channel") == channel), None)
        if row is None:
            return False
        row.click()
        return True
    return wait_for(click, timeout)


def refreshes(driver):
    """How many refreshes the page has completed since the key was given."""
    return int(driver.find_element(By.TAG_NAME, "body").get_attribute("data-refreshes") or 0)


def unredrawn(read, tries=40):
    """`read()`, asked again while the page redraws what it reads (every refresh replaces the
    tables' rows, so an element found a moment ago can be gone); [] if it never holds still."""
    for _ in range(tries):
        try:
            return read()
        except StaleElementReferenceException:
            time.sleep(0.05)
    return []


def members(driver):
    return unredrawn(lambda: [row.get_attribute("data-user")
                              for row in driver.find_elements(By.CSS_SELECTOR, "#members tbody tr[data-user]")])


def click_twice(driver, selector, timeout=5):
    """Clicks the button at `selector`, then (it is redrawn armed) again."""
    for armed in (False, True):
        def click():
            button = driver.find_element(By.CSS_SELECTOR, selector)
            if armed != ("armed" in (button.get_attribute("class") or "")):
                return False
            button.click()
            return True
        if not wait_for(click, timeout):
            return False
    return True


def node_rows(driver):
    """The nodes table: per row its data attributes and each field cell's text."""
    def read():
        rows = []
        for row in driver.find_elements(By.CSS_SELECTOR, "#nodes tbody tr[data-node]"):
            cells = {cell.get_attribute("data-field"): cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td[data-field]")}
            rows.append({"self": row.get_attribute("data-self"), "ready": row.get_attribute("data-ready"), **cells})
        return rows
    return unredrawn(read)


def check_nodes(report, driver, args):
    """One node (a server on its own): this one, ready, with the server's version and the one
    connected client's connection and session."""
    version = api_call(args.admin_port, args.api_key, "info", {})["version"]
    expected = {"self": "true", "ready": "true", "health": "ready", "version": version, "connections": "1", "sessions": "1"}
    shown = wait_for(lambda: node_rows(driver) if [{k: r.get(k) for k in expected} for r in node_rows(driver)] == [expected] else None, 5)
    report.check("the nodes table lists this node, ready, with its version, 1 connection and 1 session", bool(shown),
                 f"{node_rows(driver)}")
    uptime = shown[0].get("uptime", "") if shown else ""
    report.check("the nodes table shows the node's uptime", uptime.endswith(" s") or uptime.endswith(" min"), uptime)


def check(args):
    report = Report()
    check_headers(report, args.admin_port, args.api_key)
    driver = browser()
    try:
        # A link to the channel's view: what the page shows within two seconds of the key is
        # one round of its calls, not the clicks it takes to get there.
        view = "#" + urlencode({"app": args.app_id, "channel": f"message:{args.channel}"})
        given = give_key(driver, args.admin_port, args.api_key, view)
        listed = wait_for(lambda: args.user in members(driver) and refreshes(driver), PATIENCE)
        shown_after = time.monotonic() - given
        rounds = refreshes(driver)
        connected = driver.find_element(By.ID, "count-connections").text
        report.check("the counters show the connected client", connected not in ("", "–", "0"), connected)
        report.check(f"{args.channel}'s members list {args.user} by the page's second refresh (within 2 s of the key)",
                     bool(listed) and rounds <= SHOWN_BY_REFRESH, f"refresh {rounds}, {shown_after:.2f} s: {members(driver)}")
        print(f"shown by refresh {rounds}, {shown_after:.2f} s after the key", flush=True)
        check_nodes(report, driver, args)
        listed_channel = wait_for(lambda: args.channel in [row.get_attribute("data-channel") for row in
                                                           driver.find_elements(By.CSS_SELECTOR, "#channels tbody tr")], 5)
        report.check(f"{args.channel} is among the busiest channels", bool(listed_channel))
        report.check("the key is kept for the tab only (sessionStorage), not in the URL",
                     driver.execute_script("return sessionStorage.getItem('switchboard.apiKey')") == args.api_key
                     and args.api_key not in driver.current_url)
        driver.find_element(By.CSS_SELECTOR, "#publish-form button").click()
        published = wait_for(lambda: f"published to {args.channel}" in driver.find_element(By.ID, "notice").text, 5)
        report.check("the publish button published the test message", bool(published), driver.find_element(By.ID, "notice").text)
        if args.lock:
            revoked = click_twice(driver, f"#locks button[data-action='revoke'][data-lock='{args.lock}']")
            report.check(f"the revoke button was clicked twice for {args.lock}", revoked)
            freed = wait_for(lambda: any(row.get_attribute("data-lock") == args.lock and "free" in row.text
                                         for row in driver.find_elements(By.CSS_SELECTOR, "#locks tbody tr")), 5)
            report.check(f"{args.lock} is shown free", bool(freed), driver.find_element(By.ID, "locks").text)
        kicked = click_twice(driver, f"#members button[data-action='kick'][data-user='{args.user}']")
        report.check(f"the kick button was clicked twice for {args.user}", kicked)
        ended = wait_for(lambda: "1 session ended" in driver.find_element(By.ID, "notice").text, 5)
        report.check("the page reports the ended session", bool(ended), driver.find_element(By.ID, "notice").text)
        gone = wait_for(lambda: args.user not in members(driver), 5)
        report.check(f"{args.user} leaves the member list", bool(gone), f"{members(driver)}")
        problems = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        report.check("no error in the browser's console (no CSP violation)", not problems, f"{problems}")
    finally:
        driver.quit()
    print(f"admin page: {report.failed} failed", flush=True)
    return 0 if report.failed == 0 else 1


# MARK: The screenshot

def api_call(port, key, method, params):
    response, data = request(port, "POST", f"/api/{method}", json.dumps(params).encode(),
                             {"Authorization": f"apikey {key}", "Content-Type": "application/json"})
    if response.status != 200:
        raise RuntimeError(f"{method}: {response.status} {data!r}")
    return json.loads(data)


async def populate(args, ready, stop):
    """Clients with states, metadata, a lock and steady traffic, until `stop` is set."""
    from peer import connect

    async def client(user, channels):
        peer = await connect(args.url, user)
        answer = await peer.request("login", appId=args.app_id, userId=user, token="", heartbeatInterval=5, presenceTimeout=30)
        if answer.get("t") != "loginOk":
            raise RuntimeError(f"{user}: {answer!r}")
        peer.start_heartbeats(answer["heartbeatInterval"])
        for channel in channels:
            await peer.request("subscribe", channel=channel, features=15)
        return peer

    people = {
        "alice": ["lobby", "support", "game-42"], "bob": ["lobby", "game-42"], "carol": ["lobby", "support"],
        "dave": ["lobby", "game-42"], "erin": ["lobby"], "frank": ["game-42"], "grace": ["support"],
    }
    peers = {user: await client(user, channels) for user, channels in people.items()}
    states = {"alice": {"role": "host", "mood": "busy"}, "bob": {"role": "player", "seat": "3"},
              "carol": {"role": "agent"}, "dave": {"role": "player", "seat": "1"}, "erin": {"mood": "away"}}
    for user, items in states.items():
        await peers[user].request("setState", channelType=1, channel="lobby", items=items)
    await peers["alice"].request("setLock", channelType=1, channel="lobby", lockName="stage", ttl=30)
    await peers["alice"].request("acquireLock", channelType=1, channel="lobby", lockName="stage")
    await peers["bob"].request("setLock", channelType=1, channel="lobby", lockName="scoreboard", ttl=60)
    api_call(args.admin_port, args.api_key, "setChannelMetadata", {
        "appId": args.app_id, "channel": "lobby", "from": "alice", "recordUserId": True,
        "items": [{"key": "topic", "value": "Friday standup"}, {"key": "maxSeats", "value": "8"},
                  {"key": "theme", "value": "dark"}]})
    ready.set()
    while not stop.is_set():
        for user in ("bob", "dave", "erin"):
            await peers[user].request("publish", channelType=1, channel="lobby", message=f"hello from {user}")
        await asyncio.sleep(0.1)
    for peer in peers.values():
        await peer.close()


def screenshot(args):
    ready, stop = threading.Event(), threading.Event()
    failure = []

    def run():
        try:
            asyncio.run(populate(args, ready, stop))
        except Exception as error:  # noqa: BLE001 - reported below
            failure.append(error)
            ready.set()
    traffic = threading.Thread(target=run)
    traffic.start()
    ready.wait(30)
    if failure:
        raise failure[0]
    driver = browser(1440, 1100)
    try:
        give_key(driver, args.admin_port, args.api_key)
        open_channel(driver, "lobby", 5)
        wait_for(lambda: len(members(driver)) >= 5, 5)
        driver.find_element(By.ID, "user-id").send_keys("alice")
        driver.find_element(By.CSS_SELECTOR, "#user-form button").click()
        wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, "#user-sessions tbody tr td.mono"), 5)
        time.sleep(2.5)  # a few refreshes, so the rates are steady
        chrome = driver.execute_script("return window.outerHeight - window.innerHeight")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1440, height + chrome)
        time.sleep(0.5)
        driver.save_screenshot(args.out)
    finally:
        driver.quit()
        stop.set()
        traffic.join(10)
    print(f"saved {args.out}")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["check", "screenshot"])
    parser.add_argument("--admin-port", type=int, required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--channel", default="room")
    parser.add_argument("--user", default="alice")
    parser.add_argument("--lock", help="check: a lock of the channel USER holds, revoked with its button")
    parser.add_argument("--url")
    parser.add_argument("--app-id", default="test-app")
    parser.add_argument("--out", default="docs/admin-page.png")
    args = parser.parse_args()
    try:
        return check(args) if args.command == "check" else screenshot(args)
    except WebDriverException as error:
        print(f"the browser could not run: {error.msg}", flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
