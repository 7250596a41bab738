/**
 * A server with the real protocol layer in front of a recording stand-in for the operations: the
 * same arrangement the ASMX captures were made with (stub bodies), so binding and envelopes can be
 * compared with them exactly.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config';
import type { BoundCall } from '../../src/protocol/asmx/binding';
import type { Outcome } from '../../src/protocol/asmx/results';
import { ServiceRouter } from '../../src/protocol/router';
import { callCaches } from '../../src/operations/caches';

export interface ProtocolServer {
  readonly url: string;
  readonly config: Config;
  /** Every call that reached the operations, in order. */
  readonly calls: BoundCall[];
  close(): Promise<void>;
}

export async function startProtocolServer(
  answerCall: (call: BoundCall) => Outcome,
  env: NodeJS.ProcessEnv = {},
): Promise<ProtocolServer> {
  const config = { ...loadConfig(env), log: () => {} };
  const calls: BoundCall[] = [];
  const router = new ServiceRouter({
    config,
    caches: callCaches(config),
    async invoke(call) {
      calls.push(call);
      return answerCall(call);
    },
  });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://host');
    router
      .route(req, res, url)
      .then((handled) => {
        if (!handled) {
          res.statusCode = 404;
          res.end();
        }
      })
      .catch((error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    config,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
