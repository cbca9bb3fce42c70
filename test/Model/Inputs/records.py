"""Prints one line per transcript record of a region (lit helper):
`<kind> <role or found=...> <prompt or retrieved text, newlines as spaces>`."""
import json
import sys

for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("region") != sys.argv[2]:
        continue
    if r["kind"] == "retrieval":
        print("retrieval", f"found={r['found']}", r["text"].replace("\n", " "))
    elif r["kind"] == "request":
        text = " ".join(m["content"] for m in r["messages"]).replace("\n", " ")
        print("request", r["role"], text)
    else:
        print(r["kind"])
