// Reads react-querybuilder queries as JSON Lines on stdin and prints, for each, one JSON line:
// {"sql": formatQuery(query, "sql")} or {"error": message}. The interop tests run it once per
// session to compare react-querybuilder's own SQL export with our reading of the same queries.
import { createInterface } from "node:readline";
import { formatQuery } from "react-querybuilder/formatQuery";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer;
  try {
    answer = { sql: formatQuery(JSON.parse(line), "sql") };
  } catch (error) {
    answer = { error: String(error) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
