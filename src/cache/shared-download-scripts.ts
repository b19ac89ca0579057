/**
 * The Lua scripts of the shared download cache (src/cache/shared-download-cache.ts). Redis runs
 * each one atomically, so the byte counter, the last-use order and the entries never disagree
 * however many replicas write at once, and the bound is kept by Redis itself rather than by any
 * one process.
 *
 * Layout (every name under REDIS_KEY_PREFIX):
 *   dl:u:<policy>:<sha256(url)>  JSON {sha256, contentType, contentDisposition, filename, finalUrl, size}
 *   dl:b:<sha256(bytes)>          the bytes: one copy per content, whatever URLs it came from
 *   dl:lru                        sorted set: URL entry -> last use (ms)   (eviction order)
 *   dl:exp                        sorted set: URL entry -> expiry (ms)     (TTL sweep: a key Redis
 *                                 expired by itself must still leave the counter)
 *   dl:ref                        hash: URL entry -> its content key
 *   dl:refs                       hash: content key -> URL entries using it (dropped at 0)
 *   dl:size                       hash: URL entry or content key -> bytes charged (value + overhead)
 *   dl:stats                      hash: bytes (the sum of dl:size), urls (URL entries), evictions
 * Evicting or expiring a URL entry releases its content when no other URL entry uses it. Keys
 * carry a PX TTL as well (content: that of its newest URL entry), so nothing outlives the TTL even
 * if no script runs again.
 *
 * Scripts touch entry keys named inside the bookkeeping (not in KEYS): fine on a single Redis or a
 * replicated one, not on Redis Cluster.
 */

/** dropUrl(k): forget one URL entry, and its content when nothing else uses it. Shared by the scripts below. */
const DROP = `
local lru, exp, ref, refs, size, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local function uncharge(k)
  local s = redis.call('HGET', size, k)
  if s then
    redis.call('HINCRBY', stats, 'bytes', -tonumber(s))
    redis.call('HDEL', size, k)
  end
  return s
end
local function dropUrl(k)
  if uncharge(k) then redis.call('HINCRBY', stats, 'urls', -1) end
  redis.call('ZREM', lru, k)
  redis.call('ZREM', exp, k)
  redis.call('DEL', k)
  local blob = redis.call('HGET', ref, k)
  if blob then
    redis.call('HDEL', ref, k)
    if redis.call('HINCRBY', refs, blob, -1) <= 0 then
      redis.call('HDEL', refs, blob)
      uncharge(blob)
      redis.call('DEL', blob)
    end
  end
end
local function sweep(now, limit)
  local old = redis.call('ZRANGEBYSCORE', exp, '-inf', now, 'LIMIT', 0, limit)
  for _, k in ipairs(old) do dropUrl(k) end
  if #old > 0 then redis.call('HINCRBY', stats, 'evictions', #old) end
end
`;

/** The bookkeeping keys every script gets first, in this order (KEYS[1..6]). */
export const BOOKKEEPING = ['lru', 'exp', 'ref', 'refs', 'size', 'stats'] as const;

/**
 * put: KEYS +urlKey, blobKey; ARGV now, ttlMs, maxBytes, overhead, meta, bytes. Sweeps what
 * expired, replaces the URL entry, evicts least recently used URL entries until the new one (and
 * its content, unless another URL entry holds it already) fits under maxBytes. The bytes are
 * written even when the content is there (that heals bytes found corrupt) with the new TTL.
 * Returns {stored 0|1, evicted}.
 */
export const PUT_SCRIPT = `${DROP}
local urlKey, blobKey = KEYS[7], KEYS[8]
local now, ttl, max, over = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local meta, bytes = ARGV[5], ARGV[6]
sweep(now, 64)
dropUrl(urlKey)
local metaCharge, blobCharge = #meta + over, #bytes + over
if metaCharge + blobCharge > max then return {0, 0} end
local evicted = 0
local need
while true do
  need = metaCharge
  if not redis.call('HGET', size, blobKey) then need = need + blobCharge end
  if tonumber(redis.call('HGET', stats, 'bytes') or '0') + need <= max then break end
  local oldest = redis.call('ZRANGE', lru, 0, 0)
  if #oldest == 0 then
    -- Nothing left to evict yet the counter says full: it drifted (keys removed by hand); recount.
    local total = 0
    for _, v in ipairs(redis.call('HVALS', size)) do total = total + tonumber(v) end
    redis.call('HSET', stats, 'bytes', total, 'urls', 0)
    if total + need > max then return {0, evicted} end
    break
  end
  dropUrl(oldest[1])
  evicted = evicted + 1
end
if evicted > 0 then redis.call('HINCRBY', stats, 'evictions', evicted) end
redis.call('SET', blobKey, bytes, 'PX', ttl)
if not redis.call('HGET', size, blobKey) then
  redis.call('HSET', size, blobKey, blobCharge)
  redis.call('HINCRBY', stats, 'bytes', blobCharge)
end
redis.call('HINCRBY', refs, blobKey, 1)
redis.call('SET', urlKey, meta, 'PX', ttl)
redis.call('HSET', ref, urlKey, blobKey)
redis.call('HSET', size, urlKey, metaCharge)
redis.call('ZADD', lru, now, urlKey)
redis.call('ZADD', exp, now + ttl, urlKey)
redis.call('HINCRBY', stats, 'bytes', metaCharge)
redis.call('HINCRBY', stats, 'urls', 1)
return {1, evicted}
`;

/**
 * get: KEYS +urlKey; ARGV now. The URL entry and its bytes in one round trip, marked as used. An
 * entry whose key or bytes Redis no longer has (expired) is dropped. Returns nil or {meta, bytes}.
 */
export const GET_SCRIPT = `${DROP}
local urlKey = KEYS[7]
local meta = redis.call('GET', urlKey)
local blob = redis.call('HGET', ref, urlKey)
local bytes = blob and redis.call('GET', blob)
if not meta or not bytes then
  if redis.call('HGET', size, urlKey) then dropUrl(urlKey) end
  return nil
end
redis.call('ZADD', lru, 'XX', tonumber(ARGV[1]), urlKey)
return {meta, bytes}
`;

/**
 * forget: KEYS +urlKey, blobKey. Bytes that failed their hash check: the URL entry goes, and the
 * bytes are deleted for every URL entry using them (each of those drops itself on its next read).
 */
export const FORGET_SCRIPT = `${DROP}
dropUrl(KEYS[7])
redis.call('DEL', KEYS[8])
return 1
`;

/** stats: ARGV now. Sweeps what expired first, so the figures count live entries. Returns {bytes, urls, evictions}. */
export const STATS_SCRIPT = `${DROP}
sweep(tonumber(ARGV[1]), 256)
local v = redis.call('HMGET', stats, 'bytes', 'urls', 'evictions')
return {tonumber(v[1] or '0'), tonumber(v[2] or '0'), tonumber(v[3] or '0')}
`;

/**
 * clear: ARGV batch. Drops up to \`batch\` URL entries (least recently used first) and returns
 * {dropped, left}; the caller repeats while some are left, so Redis is never blocked by one long
 * script. The last round removes whatever content is still charged and zeroes the counters.
 */
export const CLEAR_SCRIPT = `${DROP}
local batch = redis.call('ZRANGE', lru, 0, tonumber(ARGV[1]) - 1)
for _, k in ipairs(batch) do dropUrl(k) end
local left = redis.call('ZCARD', lru)
if left == 0 then
  for _, k in ipairs(redis.call('HKEYS', size)) do redis.call('DEL', k) end
  redis.call('DEL', exp, ref, refs, size)
  redis.call('HSET', stats, 'bytes', 0, 'urls', 0)
end
return {#batch, left}
`;
