/**
 * Wire schemas of a collection's sources (issue 25): a folder, a site or a list of URLs that a sync
 * keeps the collection in step with. REST, MCP and the console read the same ones. No Node imports
 * (the console imports this file). Inputs forbid extra properties; outputs do not.
 */
import Type, { type Static } from 'typebox';
import { CollectionName } from './kb-schemas.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

/** Smallest schedule interval: anything shorter is a crawl loop, not a schedule. */
export const MIN_SYNC_EVERY_SECONDS = 10;
export const MAX_SYNC_EVERY_SECONDS = 30 * 86_400;
export const MAX_SOURCE_URLS = 1_000;

export const SourceId = Type.String({ minLength: 1, maxLength: 100, description: 'Source id (from list_sources or add_source)' });
export const SourceKindSchema = Type.Union([Type.Literal('folder'), Type.Literal('site'), Type.Literal('urls')], {
  description: 'folder: files under a folder inside ALLOWED_DIRS; site: pages crawled from a start URL; urls: a fixed list of URLs',
});

const Glob = Type.String({ minLength: 1, maxLength: 512 });
const Globs = (what: string) => Type.Array(Glob, { minItems: 1, maxItems: 32, description: what });
const Url = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[hH][tT][tT][pP][sS]?://' });

export const SiteScopeSchema = Type.Union(
  [Type.Literal('host'), Type.Literal('prefix'), Type.Object({ prefixes: Type.Array(Url, { minItems: 1, maxItems: 32 }) }, { additionalProperties: false })],
  { description: 'host: the start URL\'s host; prefix: URLs under the start URL\'s path; or a list of URL prefixes' },
);

/** What a source is, by kind (stored as given, defaults filled in). */
export const SourceSettingsSchema = Type.Object({
  path: Type.Optional(Type.String({ description: 'folder: the absolute folder' })),
  include: Type.Optional(Type.Array(Type.String(), { description: 'folder: globs relative to the folder; site: URL patterns a page must match' })),
  exclude: Type.Optional(Type.Array(Type.String(), { description: 'folder: globs to leave out; site: URL patterns to leave out' })),
  urls: Type.Optional(Type.Array(Type.String(), { description: 'urls: the URLs' })),
  start_url: Type.Optional(Type.String({ description: 'site: where the crawl starts' })),
  scope: Type.Optional(SiteScopeSchema),
  max_depth: Type.Optional(Type.Integer({ description: 'site: links followed from the start URL at most' })),
  max_pages: Type.Optional(Type.Integer({ description: 'site: pages fetched at most per sync' })),
  max_bytes: Type.Optional(Type.Integer({ description: 'site: bytes downloaded at most per sync' })),
  sitemap: Type.Optional(Type.Boolean({ description: 'site: also read sitemap.xml' })),
});

export const SyncCountsSchema = Type.Object({
  new: Type.Integer({ description: 'Documents ingested for the first time' }),
  changed: Type.Integer({ description: 'Documents whose content changed (replaced)' }),
  unchanged: Type.Integer({ description: 'Documents found as they were (skipped; a URL answered 304 or the same content)' }),
  gone: Type.Integer({ description: 'Documents deleted because their file or page is gone or out of scope' }),
  failed: Type.Integer({ description: 'Documents that could not be read or ingested (the old version, if any, stays)' }),
  transient: Type.Integer({ description: 'Of the failed: timeouts, 5xx and network errors; never a reason to delete' }),
  requests: Type.Integer({ description: 'HTTP requests the sync sent to read the source (URL and site sources)' }),
  not_modified: Type.Integer({ description: 'Of those, answered 304 Not Modified' }),
});

export const SyncStatusSchema = Type.Union(
  [Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('partial'), Type.Literal('failed'), Type.Literal('cancelled')],
  { description: 'running; succeeded: every document in step; partial: some failed (see counts and last_error); failed: the source could not be read; cancelled' },
);

export const SourceSchema = Type.Object({
  id: Type.String(),
  collection: Type.String(),
  kind: SourceKindSchema,
  settings: SourceSettingsSchema,
  sync_every: Nullable(Type.Integer(), 'Seconds between scheduled syncs; null: on demand (and on file change) only'),
  watch: Type.Boolean({ description: 'folder: synced on file change (debounced), with a periodic rescan as the safety net' }),
  created_at: Type.String(),
  updated_at: Type.String(),
  running: Type.Boolean({ description: 'A sync of this source runs now (in any process)' }),
  last_sync_at: Nullable(Type.String(), 'When the last sync ended'),
  last_status: Nullable(SyncStatusSchema),
  last_job_id: Nullable(Type.String(), 'The ingestion job of the last sync (null when nothing needed ingesting)'),
  counts: Nullable(SyncCountsSchema),
  last_error: Nullable(Type.String(), 'Why the last sync failed or what failed in it'),
  notes: Type.Array(Type.String(), { description: 'What the last sync wants known (limits reached, transient failures kept)' }),
});

export const SourceListSchema = Type.Object({ items: Type.Array(SourceSchema), total: Type.Integer() }, { description: 'The collection\'s sources' });

/** Fields of add_source and update_source besides the collection and the kind. */
export const SourceFields = {
  path: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, description: 'folder: an absolute folder inside ALLOWED_DIRS' })),
  include: Type.Optional(Globs('folder: globs a file must match, relative to the folder; site: URL globs a page must match')),
  exclude: Type.Optional(Globs('folder: globs of files to leave out; site: URL globs of pages to leave out')),
  urls: Type.Optional(Type.Array(Url, { minItems: 1, maxItems: MAX_SOURCE_URLS, description: `urls: http(s) URLs (at most ${MAX_SOURCE_URLS})` })),
  start_url: Type.Optional(Url),
  scope: Type.Optional(SiteScopeSchema),
  max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 50 })),
  max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  max_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 * 1024 ** 3 })),
  sitemap: Type.Optional(Type.Boolean()),
  sync_every: Type.Optional(
    Nullable(Type.Integer({ minimum: MIN_SYNC_EVERY_SECONDS, maximum: MAX_SYNC_EVERY_SECONDS }), 'Seconds between scheduled syncs (e.g. 3600); null or absent: no schedule'),
  ),
  watch: Type.Optional(Type.Boolean({ description: 'folder: sync on file change (default true for folders)' })),
};

export const AddSourceInputSchema = Type.Object(
  { name: CollectionName, kind: SourceKindSchema, ...SourceFields, sync: Type.Optional(Type.Boolean({ description: 'Start a first sync at once (default true)' })) },
  { additionalProperties: false },
);

export type Source = Static<typeof SourceSchema>;
export type SourceKind = Static<typeof SourceKindSchema>;
export type SourceSettings = Static<typeof SourceSettingsSchema>;
export type SyncCounts = Static<typeof SyncCountsSchema>;
export type SyncStatus = Static<typeof SyncStatusSchema>;
export type SourceList = Static<typeof SourceListSchema>;
export type AddSourceInput = Static<typeof AddSourceInputSchema>;
