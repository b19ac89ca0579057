// What the API key in use may do (GET /v1/whoami), so pages show only the controls that would
// work: no upload without ingest, no delete buttons without delete, no create/delete of
// collections without admin. The server enforces all of it anyway; until the answer is known
// (or when it fails, e.g. no key entered yet) everything is shown and the server's error says why.
import { useEffect, useState } from 'preact/hooks';
import { get, onApiKeyChange } from './api.ts';
import type { Action } from '../../src/contract/actions.ts';
import type { Whoami } from '../../src/contract/whoami-schemas.ts';

export type { Whoami };

export function useWhoami(): { who: Whoami | null; may: (action: Action) => boolean } {
  const [who, setWho] = useState<Whoami | null>(null);
  useEffect(() => {
    let ctrl = new AbortController();
    const load = () => {
      ctrl.abort();
      ctrl = new AbortController();
      const c = ctrl;
      get<Whoami>('/v1/whoami', { signal: c.signal }).then(
        (w) => {
          if (!c.signal.aborted) setWho(w);
        },
        () => {
          if (!c.signal.aborted) setWho(null);
        },
      );
    };
    load();
    const off = onApiKeyChange(load);
    return () => {
      off();
      ctrl.abort();
    };
  }, []);
  return { who, may: (action) => who === null || who.actions.includes(action) };
}
