/**
 * Upload calls validate against the tool's input without its URL field. That schema is built once
 * per (tool input, field) and so compiled once, not once per request.
 */
import t from 'tap';
import Type from 'typebox';
import { checkInput, omitProperty } from '../../src/tools/validate-input.ts';

const Input = Type.Object(
  {
    document_url: Type.String({ minLength: 8 }),
    top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
  },
  { additionalProperties: false },
);

t.test('omitProperty gives the same schema object for the same tool input and field', async (t) => {
  const a = omitProperty(Input, 'document_url');
  t.equal(omitProperty(Input, 'document_url'), a, 'same object: its compiled validator is reused');
  t.not(omitProperty(Input, 'top_k'), a, 'another field, another schema');
  t.same(Object.keys(a.properties), ['top_k']);
  t.same(a.required ?? [], []);
  t.equal((a as { additionalProperties?: unknown }).additionalProperties, false, 'options are kept');
  t.same(Object.keys(Input.properties), ['document_url', 'top_k'], 'the tool input is untouched');
});

t.test('the cached schema validates like a fresh one', async (t) => {
  const schema = omitProperty(Input, 'document_url');
  t.same(checkInput(schema, { top_k: '3' }, { convert: true }), { ok: true, value: { top_k: 3 } });
  t.same(checkInput(schema, {}, { convert: true }), { ok: true, value: { top_k: 5 } });
  const bad = checkInput(schema, { document_url: 'https://example.com/a.pdf' });
  t.equal(bad.ok, false, 'the URL field is unknown once a file is uploaded');
});
