/**
 * A loopback TCP port nothing listens on right now (the OS picks it), for a server a test,
 * benchmark or reliability run spawns. Only 127.0.0.1 is touched.
 */
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
