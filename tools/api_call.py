#!/usr/bin/env python3
"""Calls the Switchboard server API with the standard library's HTTP client only.

  api_call.py PORT KEY METHOD [JSON]     POST /api/METHOD on 127.0.0.1:PORT with
                                         "Authorization: apikey KEY" (no header when KEY is "-")
                                         and the JSON body (default {}); prints the status, then
                                         the body
"""
import http.client
import json
import sys


class API:
    """One keep-alive connection to the admin listener's /api/."""

    def __init__(self, port, key, timeout=15):
        self.port = port
        self.key = key
        self.timeout = timeout
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)

    def raw(self, method, path, body=b"", headers=None):
        """One request as given; returns (status, headers, body bytes)."""
        all_headers = {"Content-Type": "application/json"}
        if self.key is not None:
            all_headers["Authorization"] = f"apikey {self.key}"
        all_headers.update(headers or {})
        try:
            self.connection.request(method, path, body=body, headers=all_headers)
            response = self.connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            # The server closed the kept-alive connection before this request: once more on a new
            # one. (Never after a timeout: the server may be carrying the request out.)
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            self.connection.request(method, path, body=body, headers=all_headers)
            response = self.connection.getresponse()
        return response.status, response, response.read()

    def call(self, method, params=None):
        """POST /api/<method> with `params` as JSON; returns (status, decoded JSON answer)."""
        status, _, body = self.raw("POST", f"/api/{method}", json.dumps(params or {}).encode("utf-8"))
        return status, json.loads(body)

    def get(self, path):
        """GET `path`; returns (status, text)."""
        status, _, body = self.raw("GET", path)
        return status, body.decode("utf-8")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    port, key, method = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    params = sys.argv[4] if len(sys.argv) > 4 else "{}"
    api = API(port, None if key == "-" else key)
    status, _, body = api.raw("POST", f"/api/{method}", params.encode("utf-8"))
    print(status)
    print(body.decode("utf-8"))


if __name__ == "__main__":
    main()
