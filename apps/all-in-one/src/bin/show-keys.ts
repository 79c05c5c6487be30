// `npm run keys`: shows again the keys `npm start` created and printed on its first start. It
// reads the keys file only, never the database: the embedded database belongs to the running
// `npm start` process and must not be opened by a second one.
import { AllInOneConfigSchema, loadConfigOrExit } from '@tracewell/config'
import { defaultKeysBanner, setupLinkBanner, shownBaseUrl } from '../default-keys.banner.ts'
import { defaultKeysPath, readBaseUrl, readDefaultKeys } from '../default-keys.file.ts'
import { readSetupToken } from '../setup-link.file.ts'

const config = loadConfigOrExit(AllInOneConfigSchema)
const saved = await readDefaultKeys(config.DATA_DIR)
// Removed by `npm start` once used: while it is here, nobody owns a team yet.
const setupToken = await readSetupToken(config.DATA_DIR)
// Where `npm start` last listened (its PORT may have been set in another shell), else the settings here.
const baseUrl = (await readBaseUrl(config.DATA_DIR)) ?? shownBaseUrl(config.HOST, config.PORT)
if (saved === null) {
  process.stderr.write(
    `No default keys in ${defaultKeysPath(config.DATA_DIR)}. \`npm start\` creates them on its first start with an empty database and no INIT_* ` +
      'settings, and removes them once one of them is revoked. Create a key with POST /api/api-key (docs/api.md#api-keys).\n',
  )
} else {
  process.stdout.write(defaultKeysBanner(saved, baseUrl, `The default keys of this Tracewell (${defaultKeysPath(config.DATA_DIR)}):`))
}
if (setupToken !== null) process.stdout.write(setupLinkBanner(setupToken, config.PUBLIC_URL ?? baseUrl))
if (saved === null && setupToken === null) process.exit(1)
