/**
 * Input validation shared by every transport: REST (as Fastify's validator compiler) and MCP use
 * the same TypeBox schema, the same defaults and the same messages, so a call behaves the same
 * whichever way it arrives. Unknown properties are dropped, as clients often send extras.
 */
import Type, { type TObject, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';

export interface InputIssue {
  keyword: string;
  /** JSON pointer of the offending field, e.g. "/top_k". */
  instancePath: string;
  schemaPath: string;
  params: Record<string, unknown>;
  /** Completes the field path into a sentence: "/top_k" + " must be >= 1". */
  message: string;
}

export type CheckResult = { ok: true; value: unknown } | { ok: false; issue: InputIssue };

type Compiled = ReturnType<typeof Compile>;
const compiled = new WeakMap<object, Compiled>();

function compile(schema: TSchema): Compiled {
  let c = compiled.get(schema);
  if (!c) {
    c = Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

export interface CheckOptions {
  /** Convert strings to the schema's types (querystring and form fields). */
  convert?: boolean;
}

/** Applies defaults, drops unknown properties, checks; returns the value to use or the first issue. */
export function checkInput(schema: TSchema, input: unknown, opts: CheckOptions = {}): CheckResult {
  let value: unknown = input === undefined || input === null ? {} : input;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    value = Value.Default(schema, structuredClone(value));
    if (opts.convert) value = Value.Convert(schema, value);
    value = Value.Clean(schema, value);
  }
  const c = compile(schema);
  if (c.Check(value)) return { ok: true, value };
  return { ok: false, issue: describe([...c.Errors(value)] as unknown as InputIssue[]) };
}

/** Picks the most useful error and words it so that the field name leads. */
function describe(errors: InputIssue[]): InputIssue {
  const first = errors.find((e) => e.keyword !== 'boolean') ?? errors[0];
  if (first.keyword === 'required') {
    const missing = (first.params.requiredProperties as string[] | undefined) ?? [];
    return { ...first, instancePath: `${first.instancePath}/${missing[0] ?? ''}`, message: 'is required' };
  }
  // A union of literals (an enum): list the allowed values instead of "must be equal to constant".
  const samePath = errors.filter((e) => e.instancePath === first.instancePath);
  const allowed = samePath.filter((e) => e.keyword === 'const').map((e) => e.params.allowedValue);
  if (allowed.length > 0 && samePath.every((e) => e.keyword === 'const' || e.keyword === 'anyOf' || e.keyword === 'type')) {
    return { ...first, keyword: 'enum', message: `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
  }
  if (first.keyword === 'pattern' && typeof first.params.pattern === 'string' && first.params.pattern.startsWith('^https?:')) {
    return { ...first, message: 'must be an http(s) URL' };
  }
  return first;
}

/** "top_k must be >= 1" — the issue as one line, with an optional prefix such as "body". */
export function formatIssue(issue: InputIssue, prefix = ''): string {
  const field = issue.instancePath.replace(/^\//, '');
  const where = [prefix, field].filter(Boolean).join('/');
  return where ? `${where} ${issue.message}` : `input ${issue.message}`;
}

/** A copy of an object schema without one property (the URL field when a file is uploaded). */
export function omitProperty(schema: TObject, name: string): TObject {
  const properties: Record<string, TSchema> = { ...schema.properties };
  delete properties[name];
  const { type: _t, properties: _p, required: _r, ...options } = schema as unknown as Record<string, unknown>;
  return Type.Object(properties, options);
}
