/** Runs one bound call: the catalog entry's demands (a live token of this uid, a valid sign) are checked before the handler. */
import type { OperationName, OperationSpec } from '../catalog/operations';
import type { CallContext, Caller, OpResult, Services } from './context';
import { forbidden } from './errors';
import { handlers } from './registry';
import { authenticate } from './accounts/sessions';
import { signedNames, verifySign } from './accounts/signing';

export interface Call {
  readonly op: OperationSpec;
  readonly values: Readonly<Record<string, unknown>>;
  /** Each parameter's text exactly as sent ('' when absent): what the sign covers. */
  readonly text: Readonly<Record<string, string>>;
}

export interface Origin {
  readonly clientAddress: string;
  readonly baseUrl: string;
  readonly acceptLanguage?: string;
}

/** Each signed operation's parameter names in the order its sign covers them, sorted once. */
const signedNamesByOperation = new WeakMap<OperationSpec, readonly string[]>();

function signedNamesOf(op: OperationSpec): readonly string[] {
  let names = signedNamesByOperation.get(op);
  if (!names) signedNamesByOperation.set(op, (names = signedNames(op.params.map((param) => param.name))));
  return names;
}

async function callerFor(services: Services, call: Call): Promise<Caller | null> {
  if (call.op.auth === 'none') return null;
  const session = await authenticate(services, call.values.uid as bigint, call.values.token as string | null);
  if (call.op.auth === 'signed' && !verifySign(session.signingKey, call.op.name, call.text, call.values.sign as string | null, signedNamesOf(call.op))) {
    throw forbidden('sign-wrong', 'sign missing or wrong');
  }
  return session.caller;
}

/** Throws OpError for a refusal; anything else thrown is a fault of the server. */
export async function invokeOperation(services: Services, call: Call, origin: Origin): Promise<OpResult> {
  const caller = await callerFor(services, call);
  const { clientAddress, baseUrl, acceptLanguage } = origin;
  const ctx: CallContext = { services, caller, clientAddress, baseUrl, acceptLanguage };
  const handler = handlers[call.op.name as OperationName] as (ctx: CallContext, params: unknown) => Promise<OpResult>;
  return handler(ctx, call.values);
}
