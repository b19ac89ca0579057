/**
 * The DNS lookup the download agent connects through. It resolves every address of a hostname
 * and refuses the connection when ANY of them is denied, before a socket connects — checking at
 * connection time (not in a separate pre-check) closes the DNS-rebinding window.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { AddressPolicy } from './address-policy.ts';

/** Resolves every address of a hostname. Injectable so tests never need real DNS. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolveAll: ResolveAll = (hostname) => dns.promises.lookup(hostname, { all: true, order: 'verbatim' });

/** Node's net.connect `lookup` option signature. */
export type ConnectLookup = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

export class AddressDeniedError extends Error {
  readonly code = 'ERR_ADDRESS_DENIED';
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${hostname} resolves to ${reason}`);
    this.name = 'AddressDeniedError';
  }
}

export function isAddressDeniedError(err: unknown): err is AddressDeniedError {
  return err instanceof AddressDeniedError;
}

/** Resolves and checks; resolves to the allowed addresses or rejects with AddressDeniedError. */
export async function resolveChecked(hostname: string, policy: AddressPolicy, resolveAll: ResolveAll): Promise<LookupAddress[]> {
  const addresses = await resolveAll(hostname);
  if (addresses.length === 0) {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
  }
  for (const a of addresses) {
    const denial = policy.addressDenial(a.address);
    if (denial) throw new AddressDeniedError(hostname, a.address, denial);
  }
  return addresses;
}

export function createGuardedLookup(policy: AddressPolicy, resolveAll: ResolveAll = systemResolveAll): ConnectLookup {
  return (hostname, options, callback) => {
    resolveChecked(hostname, policy, resolveAll).then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
        } else if (options.all) {
          callback(null, wanted);
        } else {
          callback(null, wanted[0]!.address, wanted[0]!.family);
        }
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : ''),
    );
  };
}
