/** Bounded body reading, shared by the downloader and the HTTP embedder. */
import t from 'tap';
import { Readable } from 'node:stream';
import { BodyTooLargeError, checkDeclaredLength, declaredLength, readBounded } from '../../src/util/read-bounded.ts';

const chunks = (...parts: string[]) => parts.map((p) => Buffer.from(p));

t.test('reads everything up to the cap, letting the caller see each chunk', async (t) => {
  const seen: number[] = [];
  const out = await readBounded(Readable.from(chunks('abc', 'def')), 6, (c) => void seen.push(c.byteLength));
  t.equal(out.toString(), 'abcdef');
  t.same(seen, [3, 3]);
});

t.test('stops at the first chunk past the cap and cancels the stream', async (t) => {
  const node = Readable.from(chunks('abc', 'def', 'ghi'));
  await t.rejects(readBounded(node, 5), BodyTooLargeError);
  t.ok(node.destroyed, 'a Node stream is destroyed');
  let cancelled = false;
  const web = new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(new Uint8Array(4)),
    cancel: () => void (cancelled = true),
  });
  await t.rejects(readBounded(web as unknown as AsyncIterable<Uint8Array>, 10), { name: 'BodyTooLargeError', limit: 10 });
  t.ok(cancelled, 'a web stream is cancelled');
});

t.test('a declared Content-Length over the cap is refused before reading', async (t) => {
  t.equal(declaredLength('42'), 42);
  t.equal(declaredLength(['7']), 7);
  for (const v of [undefined, null, '', 'abc', '-3']) t.equal(declaredLength(v), undefined, String(v));
  t.doesNotThrow(() => checkDeclaredLength('10', 10));
  t.throws(() => checkDeclaredLength('11', 10), { name: 'BodyTooLargeError', declared: 11, limit: 10 });
});
