/**
 * File names for type detection and metadata: from Content-Disposition (RFC 6266, including the
 * RFC 5987 `filename*` form) or the last segment of a URL path.
 */
import path from 'node:path';

/** The base name of a caller- or server-supplied file name (at most 255 characters); never a path. */
export function cleanFilename(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const base = path.posix.basename(name.replace(/\\/g, '/')).trim();
  return base && base !== '.' && base !== '..' ? base.slice(0, 255) : undefined;
}

export function filenameFromDisposition(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const star = /filename\*\s*=\s*([^;]+)/i.exec(header);
  if (star) {
    const m = /^\s*([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(star[1]!.trim().replace(/^"(.*)"$/, '$1'));
    if (m) {
      try {
        const encoded = m[2]!;
        const name =
          m[1]!.toLowerCase() === 'utf-8'
            ? decodeURIComponent(encoded)
            : encoded.replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
        const c = cleanFilename(name);
        if (c) return c;
      } catch {
        /* fall through to the plain form */
      }
    }
  }
  const quoted = /filename\s*=\s*"((?:\\.|[^"\\])*)"/i.exec(header);
  if (quoted) return cleanFilename(quoted[1]!.replace(/\\(.)/g, '$1'));
  const plain = /filename\s*=\s*([^;\s]+)/i.exec(header);
  return plain ? cleanFilename(plain[1]!) : undefined;
}

export function filenameFromUrl(url: URL | string): string | undefined {
  try {
    const u = typeof url === 'string' ? new URL(url) : url;
    const last = u.pathname.split('/').pop() ?? '';
    if (!last) return undefined;
    let decoded = last;
    try {
      decoded = decodeURIComponent(last);
    } catch {
      /* keep the raw segment */
    }
    return cleanFilename(decoded);
  } catch {
    return undefined;
  }
}

/** Lower-case extension without the dot ('' when none). */
export function extensionOf(name: string | undefined): string {
  if (!name) return '';
  const ext = path.posix.extname(name.toLowerCase());
  return ext.startsWith('.') ? ext.slice(1) : '';
}
