/**
 * examples/mcp-agent.ts against the real server over Streamable HTTP: it ingests the folder
 * (progress notifications while ingest_documents waits, or get_job polling when it does not
 * wait), searches, and answers with the right document first, a page citation for the PDF and
 * the parent section for the markdown note; without the API key the server refuses it.
 */
import t from 'tap';
import { main, runAgent, ToolCallError } from '../../examples/mcp-agent.ts';
import { API_KEY, examplesWorld, HARBOUR_PDF } from './examples-world.ts';

t.test('the MCP agent ingests a folder and answers with page citations', async (t) => {
  const world = await examplesWorld(t);
  const lines: string[] = [];

  const answer = await runAgent({
    server: world.server,
    folder: world.folder,
    question: 'Which crane received a new hydraulic hose?',
    collection: 'agent-notes',
    apiKey: API_KEY,
    log: (l) => lines.push(l),
  });
  t.equal(answer.job.status, 'succeeded', JSON.stringify(answer.job.items));
  t.equal(answer.job.counts.done, 3, 'the three documents were ingested');
  t.ok(answer.progress.length >= 1, `${answer.progress.length} progress notifications while ingest waited`);
  // get_job is called until the job ends: how often depends on the machine, the order does not.
  t.same(
    answer.calls.filter((c, i) => c !== answer.calls[i - 1]),
    ['tools/list', 'ingest_documents', 'get_job', 'search_collection'],
  );

  const top = answer.citations[0]!;
  t.ok(top, 'at least one citation');
  t.match(top.source, /harbour\.pdf$/, 'the PDF answers the question');
  t.equal(top.page_start, 2, 'the hose is on page 2: the passage starts there');
  t.ok(top.page_end !== null && top.page_end >= 2, 'and ends on page 2 or later');
  t.match(top.pages, /^pp?\. 2(-\d+)?$/);
  t.match(top.passage, /hydraulic hose/);
  t.not(answer.confidence, 'none');
  t.match(answer.text, /\[1\] Harbour Operations Manual \(harbour\.pdf\), pp?\. 2\b/, 'the printed answer cites the page');
  t.equal(lines.at(-1), answer.text, 'the answer is printed last');
  t.ok(lines.some((l) => /^ +\d+(\.\d)?% /.test(l)), 'progress was printed');
});

t.test('the agent follows a job with get_job and reads the parent section', async (t) => {
  const world = await examplesWorld(t);
  // wait_seconds 0: ingest_documents answers at once and the agent polls get_job.
  const polled = await runAgent({
    server: world.server,
    folder: world.folder,
    question: 'Why do otters hold hands while sleeping?',
    collection: 'agent-polled',
    apiKey: API_KEY,
    waitSeconds: 0,
    pollMs: 20,
    log: () => {},
  });
  t.equal(polled.job.status, 'succeeded');
  t.equal(polled.calls[1], 'ingest_documents');
  t.ok(polled.calls.filter((c) => c === 'get_job').length >= 1, 'followed with get_job');
  const top = polled.citations[0]!;
  t.match(top.source, /otters\.md$/);
  t.equal(top.pages, null, 'markdown has no pages');
  t.same(top.heading_path.slice(-1), ['Sleeping'], 'the heading the passage sits under');
  t.ok(top.section, 'search_collection returned the parent section');
  t.match(top.section!, /drift apart/);

  const cliLines: string[] = [];
  // The CLI entry (argv as the shell would pass it) against the same, already ingested folder.
  const cli = await main([world.server, world.folder, 'tide', 'schedule', 'upper', 'quay', '--collection', 'agent-polled', '--api-key', API_KEY, '--top-k', '2'], (l) => cliLines.push(l));
  t.equal(cli.job.counts.skipped, 3, 'unchanged documents are skipped on a second ingest');
  t.match(cli.citations[0]!.source, new RegExp(`${HARBOUR_PDF.file}$`));
  t.equal(cli.citations[0]!.page_start, 3);
  t.ok(cli.citations.length <= 2, '--top-k');
  t.match(cliLines.at(-1), /^Q: tide schedule upper quay\n/);
});

t.test('without the API key the server refuses the agent', async (t) => {
  const world = await examplesWorld(t);
  const err = await runAgent({ server: world.server, folder: world.folder, question: 'x', log: () => {} }).catch((e: unknown) => e);
  t.ok(err instanceof Error, String(err));
  t.match(String((err as Error).message), /401|UNAUTHORIZED|Unauthorized/i);
  t.notOk(err instanceof ToolCallError, 'refused at the transport, before any tool runs');
});
