/**
 * The bound on the pages of one PDF whose text layer is read (PDF_MAX_PAGES). pdf.js costs about
 * a millisecond per plain text page and ten when a page has to be checked for a scan, so a
 * 100,000-page file (16 MB when written object by object) would hold an extraction slot for
 * minutes; the largest real documents we know of have under 1,000 pages.
 */
import { thousands } from '../../util/thousands.ts';

/** Pages read by default: keeps 400- and 872-page books whole, and stops a hostile file in seconds. */
export const DEFAULT_PDF_MAX_PAGES = 5_000;

/** The one note that stands where the unread pages would, so a reader of the text learns why. */
export function pageLimitMarker(firstUnread: number, total: number, max: number): string {
  const range = firstUnread === total ? `Page ${total}` : `Pages ${firstUnread}-${total}`;
  return (
    `[${range} not read: the PDF has ${thousands(total)} pages and one call reads the first ` +
    `${thousands(max)} (PDF_MAX_PAGES). Split the PDF, or raise PDF_MAX_PAGES on the server.]`
  );
}
