/** Every migration, in order, listed statically so they work under tsx, in a bundle and in tests. Append only. */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001_initial';
import * as itemOrderAndSearch from './0002_item_order_and_search';
import * as uploads from './0003_uploads';
import * as fileNameSearch from './0004_file_name_search';
import * as emailQueue from './0005_email_queue';
import * as encryption from './0006_encryption';
import * as uploadLocks from './0007_upload_locks';
import * as listingVersions from './0008_listing_versions';
import * as fileNameScan from './0009_file_name_scan';
import * as fileNameGrams from './0010_file_name_grams';
import * as sessionVersions from './0011_session_versions';
import * as encryptedUploads from './0012_encrypted_uploads';
import * as coverImageBytes from './0013_cover_image_bytes';
import * as emailLanguage from './0014_email_language';
import * as deferredSearchIndex from './0015_deferred_search_index';

export const migrations: Readonly<Record<string, Migration>> = {
  '0001_initial': initial,
  '0002_item_order_and_search': itemOrderAndSearch,
  '0003_uploads': uploads,
  '0004_file_name_search': fileNameSearch,
  '0005_email_queue': emailQueue,
  '0006_encryption': encryption,
  '0007_upload_locks': uploadLocks,
  '0008_listing_versions': listingVersions,
  '0009_file_name_scan': fileNameScan,
  '0010_file_name_grams': fileNameGrams,
  '0011_session_versions': sessionVersions,
  '0012_encrypted_uploads': encryptedUploads,
  '0013_cover_image_bytes': coverImageBytes,
  '0014_email_language': emailLanguage,
  '0015_deferred_search_index': deferredSearchIndex,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => ({ ...migrations }),
};
