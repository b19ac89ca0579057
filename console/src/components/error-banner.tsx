// An API failure as the user needs it: the message, its stable code and the request id to find it in the logs.
import { ApiError } from '../api.ts';

export function ErrorBanner({ error, onDismiss }: { error: unknown; onDismiss?: () => void }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="error-banner" role="alert" data-testid="error-banner">
      <div>
        <strong data-testid="error-code">{e ? e.code : 'ERROR'}</strong>
        <span class="error-message">{message}</span>
      </div>
      {e?.request_id ? (
        <div class="muted">
          request id <code data-testid="error-request-id">{e.request_id}</code>
        </div>
      ) : null}
      {e?.code === 'UNAUTHORIZED' ? <div class="muted">Enter a valid API key in the box at the top of the page.</div> : null}
      {onDismiss ? (
        <button type="button" class="link" onClick={onDismiss}>
          Dismiss
        </button>
      ) : null}
    </div>
  );
}
