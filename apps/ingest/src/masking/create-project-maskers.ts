import { defaultMaskingRules, type IngestConfig } from '@tracewell/config'
import type { App } from '@tracewell/http'
import { ProjectMaskers } from './project-maskers.cache.ts'

/** The masking rules of an app's trace routes, read from `app.db` and kept fresh until the app closes. */
export async function createProjectMaskers(app: App, settings: Pick<IngestConfig, 'MASKING_DEFAULT_RULES' | 'MASKING_RULES_REFRESH_MS'>): Promise<ProjectMaskers> {
  const maskers = new ProjectMaskers({ db: app.db, defaultRules: defaultMaskingRules(settings), refreshMs: settings.MASKING_RULES_REFRESH_MS, logger: app.log })
  await maskers.start()
  app.addHook('onClose', async () => maskers.close())
  return maskers
}
