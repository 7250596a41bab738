/**
 * Runs one bound call: what the catalog entry asks of the caller (a live token of this uid, a valid
 * sign) is checked here, before the operation's own function sees anything.
 */
import type { OperationName, OperationSpec } from '../catalog/operations';
import type { CallContext, Caller, OpResult, Services } from './context';
import { forbidden } from './errors';
import { handlers } from './registry';
import { authenticate } from './sessions';
import { verifySign } from './signing';

export interface Call {
  readonly op: OperationSpec;
  /** Typed parameter values, as ParamsOf<op> describes them. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Each parameter's text exactly as sent: what the sign covers. */
  readonly text: Readonly<Record<string, string>>;
}

export interface Origin {
  readonly clientAddress: string;
  readonly baseUrl: string;
}

async function callerFor(services: Services, call: Call): Promise<Caller | null> {
  if (call.op.auth === 'none') return null;
  const session = await authenticate(services, call.values.uid as bigint, call.values.token as string | null);
  if (call.op.auth === 'signed' && !verifySign(session.signingKey, call.op.name, call.text, call.values.sign as string | null)) {
    throw forbidden('sign missing or wrong');
  }
  return session.caller;
}

/** Throws OpError for a refusal; anything else thrown is a fault of the server. */
export async function invokeOperation(services: Services, call: Call, origin: Origin): Promise<OpResult> {
  const caller = await callerFor(services, call);
  const ctx: CallContext = { services, caller, clientAddress: origin.clientAddress, baseUrl: origin.baseUrl };
  const handler = handlers[call.op.name as OperationName] as (ctx: CallContext, params: unknown) => Promise<OpResult>;
  return handler(ctx, call.values);
}
