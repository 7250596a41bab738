/**
 * The operation catalog: every operation of every service, once, as data. Binding, WSDL, help pages, the sign check and
 * the typed client in src/api are derived from it. Pure data: no imports from the rest of the server.
 */
import { SORT_KEYS } from './results';

/** The SOAP types that parameters have on the wire (XML Schema names without the prefix). */
export type WireType = 'string' | 'long' | 'int' | 'base64Binary';

export interface ParamSpec {
  readonly name: string;
  readonly type: WireType;
  /** One line for the help page. */
  readonly doc: string;
}

/**
 * What an operation asks of its caller before it runs:
 * - none:   anonymous (Login, APILogin, the ShareService operations)
 * - token:  uid and token (ShareImageUpload: the interface gives it no sign)
 * - signed: uid, token and sign (every other FileService and UserService operation, and Logout)
 */
export type AuthKind = 'none' | 'token' | 'signed';

/** The result document an operation answers with (DECISIONS.md §2); `string`: ShareImageUpload's SOAP result is a string. */
export type ResultKind =
  | 'token' //          <token uid key expires>TOKEN</token>
  | 'empty' //          <result code="0" msg="" />
  | 'file' //           <result><file/></result>
  | 'folder' //         <result><folder/></result>
  | 'listing' //        <result count><folder/>…<file/>…</result>
  | 'pathListing' //    listing preceded by <path value><dir/>…</path>
  | 'restored' //       <result> with one <folder/> or <file/> per restored item, where it went
  | 'shared' //         <result> with the shared items and their share attributes
  | 'emailShareInfo' // <result> with the share and one <email/> per recipient
  | 'url' //            <result url expires />
  | 'account' //        <result><account name used quota /></result>
  | 'share' //          <result> with the share's item (ShareOpen)
  | 'string'; //        a plain string (ShareImageUpload)

export type ServiceName = 'OAuthService' | 'FileService' | 'UserService' | 'ShareService';

export interface OperationSpec {
  readonly service: ServiceName;
  readonly name: string;
  /** Parameters in wire order, including uid, token and sign where the operation takes them. */
  readonly params: readonly ParamSpec[];
  readonly auth: AuthKind;
  readonly result: ResultKind;
  /** Not in the interface document: added by DECISIONS.md, marked as an extension in the docs. */
  readonly extension: boolean;
  /** One paragraph for the help page and the client's doc comment. */
  readonly doc: string;
  /** Largest request body accepted for this operation, in bytes; the service default otherwise. */
  readonly maxBodyBytes?: number;
}

const p = <N extends string, T extends WireType>(name: N, type: T, doc: string) => ({ name, type, doc }) as const;

const uid = p('uid', 'long', 'The numeric id of the account, as returned by Login.');
const token = p('token', 'string', 'The token returned by Login or APILogin.');
const sign = p('sign', 'string', 'Request signature: lowercase hex HMAC-SHA256 (see the protocol documentation).');
const order = p('order', 'string', `Sort key: exactly one of ${SORT_KEYS.join(', ')}.`);
const desc = p('desc', 'string', '1 = descending, 0 = ascending.');
const dir = p('dir', 'string', 'Folder id; "0" or empty is the root.');
const dirid = p('dirid', 'long', 'Folder id.');
const fid = p('fid', 'long', 'File id.');
const dirids = p('dirids', 'string', 'Comma-separated folder ids (at most 1,000).');
const fids = p('fids', 'string', 'Comma-separated file ids (at most 1,000).');
const isReal = p('is_real', 'int', '0 = move to the recycle bin, 1 = delete permanently.');
const todir = p('todir', 'long', 'Destination folder id; 0 is the root.');
const emailTo = p('to', 'string', '1-20 e-mail addresses separated by , or ;.');
const itemPassword = p('password', 'string', 'The password the item was encrypted with.');
/** The share settings of FolderShare and FileShare, after the ids. */
const shareSettings = [
  p('downpwd', 'string', 'Extraction code: empty = open, else 4-32 characters.'),
  p('downValue', 'int', 'Most downloads the share allows; 0 = no limit.'),
  p('description', 'string', 'Shown on the share page; at most 500 characters.'),
] as const;
/** code and downpwd: how every ShareService operation names its share. */
const shareCode = [
  p('code', 'string', 'The share code from the share URL.'),
  p('downpwd', 'string', 'The extraction code, if the share has one.'),
] as const;

/** uid, token, …params, sign: the shape of every signed operation. */
const signed = <T extends readonly ParamSpec[]>(...params: T) => [uid, token, ...params, sign] as const;

const MiB = 1024 * 1024;

/** An operation as a group writes it: the group gives its service and usual auth; `extension` is false unless set. */
type GroupEntry = Omit<OperationSpec, 'service' | 'auth' | 'extension'> & {
  readonly auth?: AuthKind;
  readonly extension?: true;
};

/** The entries of a group as full operations, their literal names, params and auth kept for the handler types. */
type GroupOperations<S extends ServiceName, A extends AuthKind, Entries extends readonly GroupEntry[]> = {
  readonly [K in keyof Entries]: Omit<Entries[K], 'auth' | 'extension'> & {
    readonly service: S;
    readonly auth: Entries[K] extends { readonly auth: infer Own } ? Own : A;
    readonly extension: Entries[K] extends { readonly extension: true } ? true : false;
  };
};

/** A run of operations of one service, each with the group's auth kind unless it names its own. */
function group<const S extends ServiceName, const A extends AuthKind, const Entries extends readonly GroupEntry[]>(
  service: S,
  auth: A,
  entries: Entries,
): GroupOperations<S, A, Entries> {
  return entries.map((entry) => ({ service, auth, extension: false, ...entry })) as unknown as GroupOperations<S, A, Entries>;
}

export const operations = [
  ...group('OAuthService', 'none', [
    {
      name: 'Login',
      params: [p('uid', 'string', 'Account name or numeric account id.'), p('pwd', 'string', 'Password.')],
      result: 'token',
      doc: 'Logs in with an account name (or numeric id) and password. Returns a token and its signing key; <token>0</token> on a wrong name or password.',
    },
    {
      name: 'APILogin',
      params: [p('sid', 'string', 'An API key made with `fss apikey create`.')],
      result: 'token',
      doc: 'Third-party login with an API key. Returns the same token document as Login.',
    },
    { name: 'Logout', params: signed(), auth: 'signed', result: 'empty', extension: true, doc: 'Revokes the token.' },
  ]),

  ...group('FileService', 'signed', [
    {
      name: 'FolderAndFileDelete',
      params: signed(dirids, fids, isReal),
      result: 'empty',
      doc: 'Deletes folders and files: to the recycle bin (is_real=0) or permanently (is_real=1). All or nothing.',
    },
    {
      name: 'FolderDelete',
      params: signed(dirids, isReal),
      result: 'empty',
      doc: 'Deletes folders: to the recycle bin (is_real=0) or permanently (is_real=1). All or nothing.',
    },
    {
      name: 'FolderAndFileRestore',
      params: signed(dirids, fids),
      result: 'restored',
      doc: 'Restores folders and files from the recycle bin, and says where each one went.',
    },
    { name: 'FolderShare', params: signed(dirids, ...shareSettings), result: 'shared', doc: 'Shares folders (or updates their shares).' },
    { name: 'FileShare', params: signed(fids, ...shareSettings), result: 'shared', doc: 'Shares files (or updates their shares).' },
    {
      name: 'FolderEncrypt',
      params: signed(
        dirid,
        p('password', 'string', 'Password, 4-64 characters.'),
        p('password_tip', 'string', 'A hint shown when the folder is locked; at most 100 characters, must not contain the password.'),
      ),
      result: 'empty',
      doc: 'Encrypts a folder that is not yet encrypted, with everything beneath it.',
    },
    {
      name: 'FileEncrypt',
      params: signed(
        fid,
        p('password', 'string', 'Password, 4-64 characters.'),
        p('password_tip', 'string', 'A hint shown when the file is locked; at most 100 characters, must not contain the password.'),
      ),
      result: 'empty',
      doc: 'Encrypts a file that is not yet encrypted.',
    },
    {
      name: 'FileAdd',
      params: signed(
        p('name', 'string', 'File name including its extension.'),
        p('ext', 'string', 'Lowercase extension without the dot; empty if none. Must agree with name.'),
        p('size', 'long', 'Size in bytes.'),
        p('dirid', 'long', 'Parent folder id; 0 is the root.'),
        p('hash', 'string', 'SHA-256 of the content, lowercase hex.'),
      ),
      result: 'file',
      doc: 'Adds a file record after its upload has completed, or for content the account already owns.',
    },
    {
      name: 'FolderRename',
      params: signed(dirid, p('newname', 'string', 'The new name.')),
      result: 'folder',
      doc: 'Renames a folder. Returns the renamed folder.',
    },
    {
      name: 'ShareImageUpload',
      params: [
        uid,
        token,
        fid,
        p('ImagefileName', 'string', 'The image file name.'),
        p('byteFileStream', 'base64Binary', 'The image bytes: PNG, JPEG, GIF or WebP, at most 5 MiB.'),
      ],
      auth: 'token',
      result: 'string',
      maxBodyBytes: 8 * MiB,
      doc: "Uploads the cover image of a file's share; the file must be shared already (409 otherwise). Returns the image's URL, or ERROR <code> <message>.",
    },
    {
      name: 'GetFolderEmailShareInfo',
      params: signed(dirid),
      result: 'emailShareInfo',
      doc: 'Returns the e-mail share of a folder and the status of each recipient.',
    },
    {
      name: 'GetFileEmailShareInfo',
      params: signed(fid),
      result: 'emailShareInfo',
      doc: 'Returns the e-mail share of a file and the status of each recipient.',
    },
    {
      name: 'FolderEmailShare',
      params: signed(dirid, emailTo),
      result: 'empty',
      doc: 'Shares a folder by e-mail: each recipient gets the link (and the extraction code, if any).',
    },
    {
      name: 'FolderAdd',
      params: signed(p('dirid', 'long', 'Parent folder id; 0 is the root.'), p('name', 'string', 'The folder name.')),
      result: 'folder',
      extension: true,
      doc: 'Creates a folder. Returns the new folder.',
    },
    {
      name: 'FileRename',
      params: signed(fid, p('newname', 'string', 'The new name, including the extension.')),
      result: 'file',
      extension: true,
      doc: 'Renames a file. Returns the renamed file.',
    },
    {
      name: 'Move',
      params: signed(dirids, fids, todir),
      result: 'empty',
      extension: true,
      doc: 'Moves folders and files into another folder (never into their own subtree). All or nothing.',
    },
    {
      name: 'Copy',
      params: signed(dirids, fids, todir),
      result: 'empty',
      extension: true,
      doc: 'Copies folders (with everything in them) and files into a folder; a copy shares its content, taken names are numbered. All or nothing.',
    },
    {
      name: 'NamesTaken',
      params: signed(
        p('dirid', 'long', 'Folder id; 0 is the root.'),
        p('names', 'string', 'Names to look for, separated by "/" (no name holds it); 1 to 1,000 names.'),
      ),
      result: 'listing',
      extension: true,
      doc: "Returns the live folders and files of a folder whose names equal one of the names as the service compares names (case-insensitive, NFC): what an upload or a move there would collide with.",
    },
    { name: 'RecycleEmpty', params: signed(), result: 'empty', extension: true, doc: 'Permanently deletes everything in the recycle bin.' },
    {
      name: 'FileDownload',
      params: signed(fid),
      result: 'url',
      extension: true,
      doc: 'Returns a short-lived signed URL that downloads the file.',
    },
    {
      name: 'ZipDownload',
      params: signed(dirids, fids),
      result: 'url',
      extension: true,
      doc: 'Returns a short-lived signed URL that downloads the folders and files as one ZIP (folders with everything in them).',
    },
    { name: 'Unshare', params: signed(dirids, fids), result: 'empty', extension: true, doc: 'Removes the shares of folders and files.' },
    {
      name: 'FileEmailShare',
      params: signed(fid, emailTo),
      result: 'empty',
      extension: true,
      doc: 'Shares a file by e-mail: each recipient gets the link (and the extraction code, if any).',
    },
    {
      name: 'FileLink',
      params: signed(fid),
      result: 'url',
      extension: true,
      doc: 'Gives a file a permanent public direct link. Returns its URL.',
    },
    { name: 'FileUnlink', params: signed(fid), result: 'empty', extension: true, doc: "Removes a file's direct link." },
    {
      name: 'Unlock',
      params: signed(
        p('dirid', 'long', 'Folder id, or 0 when unlocking a file.'),
        p('fid', 'long', 'File id, or 0 when unlocking a folder.'),
        itemPassword,
      ),
      result: 'empty',
      extension: true,
      doc: 'Unlocks an encrypted folder or file for this token, until the token expires.',
    },
    {
      name: 'Lock',
      params: signed(p('dirid', 'long', 'Folder id, or 0 when locking a file.'), p('fid', 'long', 'File id, or 0 when locking a folder.')),
      result: 'empty',
      extension: true,
      doc: "Locks an unlocked encrypted folder or file again for this token: forgets the token's unlock of its key. Locking what is locked changes nothing.",
    },
    {
      name: 'Decrypt',
      params: signed(
        p('dirid', 'long', 'Folder id, or 0 when decrypting a file.'),
        p('fid', 'long', 'File id, or 0 when decrypting a folder.'),
        itemPassword,
      ),
      result: 'empty',
      extension: true,
      doc: 'Removes the encryption of a folder or file.',
    },
  ]),

  ...group('UserService', 'signed', [
    {
      name: 'GetAccountInfo',
      params: signed(),
      result: 'account',
      extension: true,
      doc: "Returns the account's name, the bytes its files use (the recycle bin's included) and its quota.",
    },
    { name: 'GetFiles', params: signed(dir, order, desc), result: 'listing', doc: 'Lists the folders and files of a folder.' },
    {
      name: 'GetFilesWhitPath',
      params: signed(dir, order, desc),
      result: 'pathListing',
      doc: 'Lists the folders and files of a folder, with its absolute path.',
    },
    {
      name: 'GetNewUploadFiles',
      params: signed(order, desc),
      result: 'listing',
      doc: 'Lists the files added in the last 30 days (the newest 500).',
    },
    {
      name: 'FileSearch',
      params: signed(order, desc, p('keyword', 'string', 'Part of a file name, 1-100 characters; case-insensitive.')),
      result: 'listing',
      doc: 'Finds files whose names contain the keyword (at most 1,000 hits).',
    },
    {
      name: 'FolderSearch',
      params: signed(order, desc, p('keyword', 'string', 'Part of a folder name, 1-100 characters; case-insensitive.')),
      result: 'listing',
      extension: true,
      doc: 'Finds folders whose names contain the keyword, each with its path (at most 1,000 hits).',
    },
    {
      name: 'GetRecycleFiles',
      params: signed(order, desc),
      result: 'listing',
      doc: 'Lists the folders and files in the recycle bin, with their purge dates.',
    },
    { name: 'GetShareFiles', params: signed(order, desc), result: 'listing', doc: 'Lists the folders and files the account has shared.' },
    { name: 'GetLinkFiles', params: signed(order, desc), result: 'listing', doc: 'Lists the files that have a direct link.' },
  ]),

  // The public share page's calls: anonymous, the share named by its code.
  ...group('ShareService', 'none', [
    {
      name: 'ShareOpen',
      params: shareCode,
      result: 'share',
      extension: true,
      doc: 'Opens a share: returns the share and its folder or file.',
    },
    {
      name: 'ShareList',
      params: [...shareCode, p('dir', 'string', 'A folder inside the shared folder; "0" or empty is the shared folder itself.'), order, desc],
      result: 'listing',
      extension: true,
      doc: 'Lists a folder inside a shared folder.',
    },
    {
      name: 'ShareDownload',
      params: [...shareCode, fid],
      result: 'url',
      extension: true,
      doc: "Returns a short-lived download URL for a shared file, counted against the share's download limit.",
    },
  ]),

  // Previews (issue 21: docs/protocol.md, the /v/ route), after the rest to keep the catalog's order.
  ...group('FileService', 'signed', [
    {
      name: 'FilePreview',
      params: signed(fid),
      result: 'url',
      extension: true,
      doc: 'Returns a short-lived signed URL that shows the file inline in a viewer (images, video, audio, PDF, text), typed from its bytes.',
    },
  ]),
  ...group('ShareService', 'none', [
    {
      name: 'SharePreview',
      params: [...shareCode, fid],
      result: 'url',
      extension: true,
      doc: "Returns a short-lived preview URL for a shared file: images as a scaled rendition (not counted), anything else counted against the share's download limit.",
    },
    {
      name: 'ShareZipDownload',
      params: [
        ...shareCode,
        p('dir', 'string', 'The folder the selection is in; "0" or empty is the shared folder itself.'),
        p('dirids', 'string', 'Comma-separated ids of folders in dir; with fids empty too, the whole of dir.'),
        fids,
      ],
      result: 'url',
      extension: true,
      doc: "Returns a short-lived URL that downloads a shared folder, or a selection in it, as one ZIP, counted as one download of the share's limit.",
    },
  ]),
  ...group('FileService', 'signed', [
    {
      name: 'ThumbnailBase',
      params: signed(),
      result: 'url',
      extension: true,
      doc: 'Returns the prefix of thumbnail URLs for the caller\'s files, valid until the end of the next UTC day: append "{fid}/small" or "{fid}/large".',
    },
  ]),
  ...group('ShareService', 'none', [
    {
      name: 'ShareThumbnailBase',
      params: shareCode,
      result: 'url',
      extension: true,
      doc: 'Returns the prefix of thumbnail URLs for the files of a share, valid until the end of the next UTC day: append "{fid}/small" or "{fid}/large".',
    },
  ]),
] as const satisfies readonly OperationSpec[];

export type Operation = (typeof operations)[number];
export type OperationName = Operation['name'];

export const services: readonly ServiceName[] = ['OAuthService', 'FileService', 'UserService', 'ShareService'];

/** What a service is for, for its help page. */
export const serviceDocs: Record<ServiceName, string> = {
  OAuthService: 'Log in and obtain a token.',
  FileService: 'Add file records; delete, restore, rename, move, encrypt and share files and folders.',
  UserService: "List and search an account's files and folders.",
  ShareService: 'Open shares anonymously: the calls of the public share page.',
};

/** Each service's operations in catalog order, listed once: SOAP calls look their operation up in them. */
const operationsByService: ReadonlyMap<ServiceName, readonly OperationSpec[]> = new Map(
  services.map((service) => [service, Object.freeze(operations.filter((op) => op.service === service))]),
);

export function operationsOf(service: ServiceName): readonly OperationSpec[] {
  return operationsByService.get(service) ?? [];
}

export function findOperation(service: ServiceName, name: string): OperationSpec | undefined {
  return operations.find((op) => op.service === service && op.name === name);
}
