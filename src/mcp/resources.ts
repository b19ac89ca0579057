/** The MCP resources, generated from the registry: supported formats and tool descriptions. */
import { servedOverMcp, type AnyTool } from '../tools/define-tool.ts';
import { supportedFormats } from '../tools/formats.ts';
import { toolTimeoutMs } from '../tools/run-tool.ts';
import type { Config } from '../config.ts';
import { PACKAGE_INFO } from '../package-info.ts';

export interface McpResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'application/json';
  read(tools: readonly AnyTool[], config: Readonly<Config>): unknown;
}

/** A schema as plain JSON (TypeBox keeps its bookkeeping in non-enumerable keys). */
export function jsonSchema(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

export const RESOURCES: readonly McpResource[] = [
  {
    uri: 'rag://supported-formats',
    name: 'supported-formats',
    title: 'Supported formats',
    description: 'Document formats this server reads, with extensions, media types and the tools that read each.',
    mimeType: 'application/json',
    read: (tools) => ({ formats: supportedFormats(tools) }),
  },
  {
    uri: 'rag://tool-descriptions',
    name: 'tool-descriptions',
    title: 'Tool descriptions',
    description: 'Every tool with its description, group, timeout, REST route (and whether it is an MCP tool) and input/output JSON Schemas.',
    mimeType: 'application/json',
    read: (tools, config) => ({
      server: { name: PACKAGE_INFO.name, version: PACKAGE_INFO.version },
      tools: tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        group: t.group,
        timeout_seconds: toolTimeoutMs(t, config) / 1000,
        rest: { method: t.rest.method, path: t.rest.path },
        // false: a REST-only operation (not an MCP tool).
        mcp: servedOverMcp(t),
        accepts_upload: Boolean(t.upload),
        formats: t.formats ?? [],
        input_schema: jsonSchema(t.input),
        output_schema: jsonSchema(t.output),
      })),
    }),
  },
];
