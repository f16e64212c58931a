#!/usr/bin/env bash
# Runs both examples against the embedded fake service and checks their output against the seed
# (examples/connect.ts: 5 agents, 500 customer users, 60 conversations, 10,000 messages).
set -euo pipefail
out=${1:-.ci/out}
mkdir -p "$out"
unset CHAT_SERVICE_BASE_URL CHAT_SERVICE_KEY_ID CHAT_SERVICE_KEY_SECRET

npm start > "$out/quickstart.txt"
cat "$out/quickstart.txt"
for expected in 'agents: 5 ' 'customer users: 500$' 'conversations: 60$' 'messages: 10000 ' 'Using the embedded fake service'; do
  grep -q "$expected" "$out/quickstart.txt" || { echo "quickstart output lacks '$expected'"; exit 1; }
done
if grep -q 'sk_test_' "$out/quickstart.txt"; then echo 'quickstart printed the key secret'; exit 1; fi

npm run -s export-messages -- "$out/messages.jsonl" 2> "$out/export.err"
tail -c 300 "$out/export.err"; echo
lines=$(wc -l < "$out/messages.jsonl")
[ "$lines" -eq 10000 ] || { echo "export wrote $lines lines, expected 10000"; exit 1; }
# A finished export deletes its cursor file (`chat-service export`, which the example runs), so the next run starts anew.
[ ! -e "$out/messages.jsonl.cursor" ] || { echo "export finished but left $out/messages.jsonl.cursor"; exit 1; }
npm exec -- node -e '
  const lines = require("node:fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const ids = new Set();
  for (const line of lines) { const m = JSON.parse(line); if (!m.id || !m.conversation_id || !m.role) throw new Error("bad line " + line); ids.add(m.id) }
  if (ids.size !== 10000) throw new Error("expected 10000 distinct messages, got " + ids.size);
  console.log("export: 10000 distinct messages, every line a message");
' "$out/messages.jsonl"

# The nightly job: the first run with a checkpoint writes every message, the next one nothing new.
# The script's build (`tsup`) ran above, and nothing changed since: these two run the example as
# the script does, without building the same dist/ again (some 1.5 s of CPU each).
rm -f "$out/night-1.jsonl" "$out/night-2.jsonl" "$out/messages.checkpoint.json"
npm exec -- node examples/export-messages.ts "$out/night-1.jsonl" --checkpoint "$out/messages.checkpoint.json" 2> "$out/export-night.err"
npm exec -- node examples/export-messages.ts "$out/night-2.jsonl" --checkpoint "$out/messages.checkpoint.json" 2>> "$out/export-night.err"
tail -n 2 "$out/export-night.err"
cmp -s "$out/night-1.jsonl" "$out/messages.jsonl" || { echo "the first night's export differs from the full export"; exit 1; }
[ ! -s "$out/night-2.jsonl" ] || { echo "the second night exported messages though nothing was added"; exit 1; }
grep -q 'conversations: 0 new, 0 grown, 60 unchanged, 0 rewound, 0 deleted' "$out/export-night.err" || { echo "the second night's summary is wrong"; exit 1; }
