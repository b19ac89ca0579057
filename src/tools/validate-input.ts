/**
 * Input validation shared by every transport: REST (as Fastify's validator compiler) and MCP use
 * the same TypeBox schema, the same defaults and the same messages, so a call behaves the same
 * whichever way it arrives. Unknown properties are refused (VALIDATION_ERROR naming the field)
 * wherever the published schema says additionalProperties: false, as it does for every tool input:
 * a misspelt option must not be ignored silently.
 */
import Type, { type TObject, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import { isStackOverflow, MAX_JSON_DEPTH } from '../json-limits.ts';

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

const withDefaults = new WeakMap<object, boolean>();

/** Whether any part of the schema declares a `default` (found once per schema). */
function hasDefaults(schema: TSchema): boolean {
  let known = withDefaults.get(schema);
  if (known === undefined) {
    const seen = new Set<unknown>();
    const walk = (node: unknown): boolean => {
      if (node === null || typeof node !== 'object' || seen.has(node)) return false;
      seen.add(node);
      if (!Array.isArray(node) && 'default' in node) return true;
      return Object.values(node).some(walk);
    };
    known = walk(schema);
    withDefaults.set(schema, known);
  }
  return known;
}

export interface CheckOptions {
  /** Convert strings to the schema's types (querystring and form fields). */
  convert?: boolean;
}

/**
 * Value.Convert turns "1.5" into the integer 1; a querystring or form field that is not an
 * integer literal must fail as "must be integer" instead, so such fields keep their string.
 */
function convertStrings(schema: TSchema, value: Record<string, unknown>): unknown {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const notIntegers: [string, unknown][] = [];
  for (const [name, prop] of Object.entries(properties)) {
    const v = value[name];
    if (prop.type === 'integer' && typeof v === 'string' && !/^\s*[+-]?\d+\s*$/.test(v)) notIntegers.push([name, v]);
  }
  const converted = Value.Convert(schema, value);
  if (notIntegers.length === 0 || converted === null || typeof converted !== 'object') return converted;
  return { ...(converted as Record<string, unknown>), ...Object.fromEntries(notIntegers) };
}

/** Applies defaults, checks (unknown properties included); returns the value to use or the first issue. */
export function checkInput(schema: TSchema, input: unknown, opts: CheckOptions = {}): CheckResult {
  try {
    let value: unknown = input === undefined || input === null ? {} : input;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      // Defaults are written into a copy (the caller's object stays as it came); a schema without
      // any needs neither the copy nor the walk, which were most of a small call's validation.
      if (hasDefaults(schema)) value = Value.Default(schema, structuredClone(value));
      if (opts.convert) value = convertStrings(schema, value as Record<string, unknown>);
    }
    const c = compile(schema);
    if (c.Check(value)) return { ok: true, value };
    return { ok: false, issue: describe(schema, [...c.Errors(value)] as unknown as InputIssue[]) };
  } catch (err) {
    // The transports bound nesting before this (src/json-limits.ts); a caller that does not must
    // still get an input error, not a stack overflow.
    if (isStackOverflow(err)) return { ok: false, issue: TOO_DEEP_ISSUE };
    throw err;
  }
}

const TOO_DEEP_ISSUE: InputIssue = {
  keyword: 'maxDepth',
  instancePath: '',
  schemaPath: '#',
  params: { maxDepth: MAX_JSON_DEPTH },
  message: `is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels`,
};

/** The property names of the object schema at a schema path such as "#/properties/n". */
function knownProperties(schema: TSchema, schemaPath: string): string[] {
  let node: unknown = schema;
  for (const part of schemaPath.replace(/^#\/?/, '').split('/').filter(Boolean)) {
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  const properties = node !== null && typeof node === 'object' ? (node as { properties?: unknown }).properties : undefined;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
}

/** Picks the most useful error and words it so that the field name leads. */
function describe(schema: TSchema, errors: InputIssue[]): InputIssue {
  const first = errors.find((e) => e.keyword !== 'boolean') ?? errors[0];
  if (first.keyword === 'additionalProperties') {
    const unknown = (first.params.additionalProperties as string[] | undefined) ?? [];
    const known = knownProperties(schema, first.schemaPath);
    const others = unknown.length > 1 ? `; also unknown: ${unknown.slice(1).join(', ')}` : '';
    const expected = known.length > 0 ? `known fields: ${known.join(', ')}` : 'this object takes no fields';
    return { ...first, instancePath: `${first.instancePath}/${unknown[0] ?? ''}`, message: `is not a known field (${expected}${others})` };
  }
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

const omitted = new WeakMap<TObject, Map<string, TObject>>();

/**
 * A copy of an object schema without one property (the URL field when a file is uploaded). The
 * same (schema, name) gives the same object every time, so its compiled validator is built once
 * per tool rather than once per upload request.
 */
export function omitProperty(schema: TObject, name: string): TObject {
  let byName = omitted.get(schema);
  if (!byName) omitted.set(schema, (byName = new Map()));
  let out = byName.get(name);
  if (!out) {
    const properties: Record<string, TSchema> = { ...schema.properties };
    delete properties[name];
    const { type: _t, properties: _p, required: _r, ...options } = schema as unknown as Record<string, unknown>;
    out = Type.Object(properties, options);
    byName.set(name, out);
  }
  return out;
}
