/**
 * The parameters of the catalog that name a folder or a file, found from the catalog itself (their
 * documentation says "folder id", "file ids", or "A folder …"), so that an operation added later is
 * in the authorization matrix without anyone listing it.
 */
import { operations, type OperationSpec, type ParamSpec } from '../../../src/catalog/operations';

export type ItemKind = 'folder' | 'file';

export interface IdParam {
  readonly op: OperationSpec;
  readonly param: ParamSpec;
  readonly kind: ItemKind;
  /** A comma-separated id list (dirids, fids) rather than one id. */
  readonly list: boolean;
}

const NAMES_AN_ID = /\b(folder|file) ids?\b/i;
const NAMES_AN_ITEM = /^an? (folder|file)\b/i;

export function idParamOf(op: OperationSpec, param: ParamSpec): IdParam | null {
  const match = NAMES_AN_ID.exec(param.doc) ?? NAMES_AN_ITEM.exec(param.doc);
  if (!match) return null;
  return { op, param, kind: match[1].toLowerCase() as ItemKind, list: /\bids\b/i.test(param.doc) };
}

/** Every (operation, id-bearing parameter) of the catalog. */
export function idParams(): IdParam[] {
  return operations.flatMap((op) => op.params.map((param) => idParamOf(op, param)).filter((p): p is IdParam => p !== null));
}
