#!/usr/bin/env python3
"""Checks docs/openapi.yaml, the server API's description, and checks a live server against it.

  check_openapi.py validate FILE      validates FILE as OpenAPI 3.1 (PyPI's openapi-spec-validator);
                                      prints "valid", then every documented method, one a line
  check_openapi.py serve FILE PORT KEY APP
                                      against the API on 127.0.0.1:PORT (key KEY, app APP, whose
                                      certificate the server holds): every documented method
                                      exists (it does not answer 404 serviceNotSupport); sample calls
                                      have the documented request shape, and their answers a
                                      documented status and the documented shape (JSON Schema
                                      2020-12, PyPI's jsonschema)
Exits 0 when all holds, 1 with one line per problem.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pydeps import require  # noqa: E402

require("yaml", "openapi_spec_validator", "jsonschema", "referencing")

import yaml  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402
from openapi_spec_validator import validate  # noqa: E402
from referencing import Registry, Resource  # noqa: E402
from referencing.jsonschema import DRAFT202012  # noqa: E402

from api_call import API  # noqa: E402

PREFIX = "/api/"
NOT_SUPPORTED = -10022


def load(path):
    with open(path, encoding="utf-8") as file:
        return yaml.safe_load(file)


def methods(spec):
    return sorted(path[len(PREFIX):] for path in spec["paths"] if path.startswith(PREFIX))


def samples(app):
    """Calls that need nothing set up beforehand, each with the status it should get."""
    room = {"appId": app, "channel": "openapi-room"}
    return [
        ("publish", {**room, "message": "hello"}, 200),
        ("publish", {"appId": app, "channelType": "user", "channel": "openapi-nobody", "message": "hi"}, 200),
        ("broadcast", {"appId": app, "channels": ["openapi-a", "openapi-b"], "messageBase64": "AAE="}, 200),
        ("presence", {**room, "includeState": True}, 200),
        ("whereNow", {"appId": app, "userId": "openapi-user"}, 200),
        ("presenceStats", {"appId": app, "channels": [{"channel": "openapi-room"}]}, 200),
        ("getState", {**room, "userId": "openapi-user"}, 404),
        ("setState", {**room, "userId": "openapi-user", "states": {"k": "v"}}, 404),
        ("disconnect", {"appId": app, "userId": "openapi-user"}, 200),
        ("sessions", {"appId": app, "userId": "openapi-user"}, 200),
        ("counters", {}, 200),
        ("unsubscribe", {**room, "userId": "openapi-user"}, 404),
        ("channels", {"appId": app, "pattern": "openapi-*", "limit": 10}, 200),
        ("info", {"appId": app}, 200),
        ("info", {}, 200),
        ("setChannelMetadata", {**room, "items": [{"key": "k", "value": "v", "ttlMs": 60000}], "recordTs": True}, 200),
        ("getChannelMetadata", room, 200),
        ("setChannelMetadata", {**room, "majorRevision": 999999, "items": [{"key": "k", "value": "w"}]}, 409),
        ("removeChannelMetadata", room, 200),
        ("setUserMetadata", {"appId": app, "userId": "openapi-user", "items": [{"key": "k", "value": "v"}], "recordUserId": True}, 200),
        ("getUserMetadata", {"appId": app, "userId": "openapi-user"}, 200),
        ("removeUserMetadata", {"appId": app, "userId": "openapi-user", "items": [{"key": "k"}]}, 200),
        ("getLocks", room, 200),
        ("revokeLock", {**room, "lockName": "L", "userId": "openapi-user"}, 404),
        ("mintToken", {"appId": app, "userId": "openapi-user", "format": "006", "expireSeconds": 0}, 200),
        ("batch", {"calls": [{"method": "info", "params": {"appId": app}}, {"method": "getLocks", "params": {}}]}, 200),
        ("info", {"appId": app, "unknown": 1}, 400),
    ]


class Document:
    """The answers' schemas of a description, resolved."""

    def __init__(self, spec):
        self.spec = spec
        self.registry = Registry().with_resource("urn:openapi", Resource(contents=spec, specification=DRAFT202012))

    def response(self, method, status):
        """The JSON pointer of the schema of `method`'s answer with `status`, or None when undocumented."""
        responses = self.spec["paths"][PREFIX + method]["post"]["responses"]
        if str(status) not in responses:
            return None
        response = responses[str(status)]
        pointer = "/paths/" + (PREFIX + method).replace("/", "~1") + f"/post/responses/{status}"
        if "$ref" in response:
            pointer = response["$ref"][1:]
            response = self.resolve(pointer)
        return pointer + "/content/application~1json/schema"

    def resolve(self, pointer):
        node = self.spec
        for part in pointer.strip("/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def problems(self, pointer, instance):
        validator = Draft202012Validator({"$ref": "urn:openapi#" + pointer}, registry=self.registry)
        return [f"{'/'.join(map(str, error.absolute_path)) or '(top)'}: {error.message}" for error in validator.iter_errors(instance)]


def serve(spec, port, key, app):
    api = API(port, key)
    document = Document(spec)
    problems = []
    for method in methods(spec):
        status, answer = api.call(method, {})
        if status == 404 and answer.get("code") == NOT_SUPPORTED:
            problems.append(f"{method}: documented, but the server has no such method")
    for method, params, expected in samples(app):
        if expected != 400:
            pointer = "/paths/" + (PREFIX + method).replace("/", "~1") + "/post/requestBody/content/application~1json/schema"
            problems += [f"{method} request: {problem}" for problem in document.problems(pointer, params)]
        status, answer = api.call(method, params)
        if status != expected:
            problems.append(f"{method}: status {status}, expected {expected}: {answer}")
        pointer = document.response(method, status)
        if pointer is None:
            problems.append(f"{method}: status {status} is not documented")
            continue
        problems += [f"{method} {status}: {problem}" for problem in document.problems(pointer, answer)]
    return problems


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("validate", "serve"):
        sys.exit(__doc__)
    spec = load(sys.argv[2])
    if sys.argv[1] == "validate":
        validate(spec)
        print("valid")
        print("\n".join(methods(spec)))
        return 0
    problems = serve(spec, int(sys.argv[3]), sys.argv[4], sys.argv[5])
    for problem in problems:
        print(problem)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
