// The container files checked by reading them: each manifest must agree with the settings schemas
// and default ports of @tracewell/config and with the repository (image.test.ts builds and runs
// the image wherever Docker is installed, and fails when its daemon does not answer).
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, resolve } from 'node:path'
import { describe, it } from 'node:test'
import { defaultPorts, loadConfig } from '@tracewell/config'
import { QueueNames, spanBatchShards } from '@tracewell/queue'
import { parseAllDocuments } from 'yaml'
import {
  baseImageOfScript,
  copySources,
  type Doc,
  dockerDir,
  dockerIgnoreRules,
  filesUnder,
  interpolate,
  isDockerIgnored,
  isSecretName,
  k8sDir,
  loadYamlDocuments,
  migrate,
  namespace,
  otlpGrpcPort,
  parseDockerfile,
  parseEnvFile,
  repoRoot,
  requiredSettings,
  sampleSecretValues,
  effectiveNodeFlags,
  serviceNodeFlags,
  services,
  type SettingsSchema,
  tracewellImage,
  workspaceManifests,
  bundledPrograms,
} from './manifest-helpers.ts'

const imageRepository = (image: string): string => image.replace(/@sha256:[0-9a-f]+$/, '').replace(/:[^:/]+$/, '')

const bundles = await bundledPrograms()

/** The command runs the bundle of `program`'s source, which `npm run build:services` builds from a file in the repository. */
function assertEntryFile(args: unknown, program: { source: string; entry: string }, where: string, nodeFlags: readonly string[] = []): void {
  assert.ok(Array.isArray(args), `${where}: the command must be a list`)
  const entries = (args as string[]).filter((arg) => /\.(ts|mjs|js)$/.test(arg))
  assert.deepEqual(entries, [program.entry], `${where}: runs ${program.entry}`)
  assert.equal(bundles.get(program.entry), program.source, `${where}: ${program.entry} is built from ${program.source} (docker/services.rolldown.config.mjs)`)
  assert.ok(existsSync(join(repoRoot, program.source)), `${where}: ${program.source} does not exist in the repository`)
  assert.deepEqual((args as string[]).slice(0, (args as string[]).indexOf(program.entry)), nodeFlags, `${where}: the service's own V8 flags, before its entry file`)
}

function assertSettingsKnown(schema: SettingsSchema, names: string[], where: string): void {
  const known = Object.keys(schema.properties)
  for (const name of names) assert.ok(known.includes(name), `${where}: ${name} is not a setting of this service (known: ${known.join(', ')})`)
}

function assertRequiredProvided(schema: SettingsSchema, names: string[], where: string): void {
  for (const name of requiredSettings(schema)) assert.ok(names.includes(name), `${where}: required setting ${name} is not provided`)
}

// ---- Kubernetes ----------------------------------------------------------------------------

const k8sFiles = readdirSync(k8sDir).filter((file) => /\.ya?ml$/.test(file)).sort()
const kustomization = loadYamlDocuments(join(k8sDir, 'kustomization.yaml'))[0]!
const resources = k8sFiles.filter((file) => file !== 'kustomization.yaml').flatMap((file) =>
  loadYamlDocuments(join(k8sDir, file)).map((doc) => ({ file, doc })),
)
const ofKind = (kind: string): Doc[] => resources.filter(({ doc }) => doc.kind === kind).map(({ doc }) => doc)
const named = (kind: string, name: string): Doc | undefined => ofKind(kind).find((doc) => doc.metadata?.name === name)

const secrets = ofKind('Secret')
const configMaps = ofKind('ConfigMap')
const deployments = ofKind('Deployment')
const k8sServices = ofKind('Service')

const labelsMatch = (selector: Record<string, string>, labels: Record<string, string>): boolean =>
  Object.entries(selector).every(([key, value]) => labels[key] === value)

/** Env of a pod's container, resolved: names from env and envFrom, values with secrets sampled. */
function containerEnvironment(container: Doc, where: string): { names: string[]; values: Record<string, string> } {
  const names: string[] = []
  const values: Record<string, string> = {}
  for (const source of container.envFrom ?? []) {
    assert.equal(source.secretRef, undefined, `${where}: take secrets one key at a time (env valueFrom.secretKeyRef), not envFrom`)
    assert.ok(source.configMapRef, `${where}: envFrom must reference a ConfigMap`)
    const configMap = configMaps.find((doc) => doc.metadata.name === source.configMapRef.name)
    assert.ok(configMap, `${where}: ConfigMap ${source.configMapRef.name} is not in the manifests`)
    for (const [name, value] of Object.entries(configMap.data ?? {})) {
      assert.equal(typeof value, 'string', `${where}: ConfigMap value ${name} must be a string`)
      assert.ok(!isSecretName(name), `${where}: ${name} is a secret and must not be in a ConfigMap`)
      names.push(name)
      values[name] = value as string
    }
  }
  for (const variable of container.env ?? []) {
    const where2 = `${where}: env ${variable.name}`
    assert.ok(!names.includes(variable.name), `${where2} is set twice`)
    names.push(variable.name)
    const secretRef = variable.valueFrom?.secretKeyRef
    const configMapRef = variable.valueFrom?.configMapKeyRef
    if (configMapRef) {
      const configMap = configMaps.find((doc) => doc.metadata.name === configMapRef.name)
      assert.ok(configMap, `${where2}: ConfigMap ${configMapRef.name} is not in the manifests`)
      const value = configMap.data?.[configMapRef.key] as string | undefined
      assert.ok(value !== undefined || configMapRef.optional === true, `${where2}: ConfigMap key ${configMapRef.key} is missing`)
      if (value !== undefined) values[variable.name] = value
    }
    if (isSecretName(variable.name)) {
      assert.equal(variable.value, undefined, `${where2} must not be a literal`)
      assert.ok(secretRef, `${where2} must come from valueFrom.secretKeyRef`)
    }
    if (secretRef) {
      const secret = secrets.find((doc) => doc.metadata.name === secretRef.name)
      assert.ok(secret, `${where2}: Secret ${secretRef.name} is not in the manifests`)
      const keys = Object.keys({ ...secret.stringData, ...secret.data })
      if (secretRef.optional !== true) assert.ok(keys.includes(secretRef.key), `${where2}: Secret key ${secretRef.key} is missing`)
      const sample = sampleSecretValues[secretRef.key]
      assert.ok(sample, `${where2}: add a sample value for Secret key ${secretRef.key} to the test`)
      values[variable.name] = sample
    } else if (variable.value !== undefined) {
      assert.equal(typeof variable.value, 'string', `${where2} must be a string`)
      values[variable.name] = variable.value
    }
  }
  return { names, values }
}

function podSpecOf(doc: Doc): Doc {
  return doc.kind === 'CronJob' ? doc.spec.jobTemplate.spec.template.spec : doc.spec.template.spec
}

function assertHardenedPod(pod: Doc, where: string): void {
  assert.equal(pod.securityContext?.runAsNonRoot, true, `${where}: runAsNonRoot`)
  assert.ok(Number.isInteger(pod.securityContext?.runAsUser) && pod.securityContext.runAsUser > 0, `${where}: a numeric non-root runAsUser`)
  for (const container of pod.containers) {
    assert.notEqual(container.securityContext?.runAsUser, 0, `${where}: container runs as root`)
    assert.equal(container.securityContext?.allowPrivilegeEscalation, false, `${where}: allowPrivilegeEscalation false`)
    assert.deepEqual(container.securityContext?.capabilities?.drop, ['ALL'], `${where}: drops all capabilities`)
    assert.ok(container.resources?.requests?.cpu, `${where}: a cpu request`)
    assert.ok(container.resources?.requests?.memory, `${where}: a memory request`)
    assert.ok(container.resources?.limits?.memory, `${where}: a memory limit`)
    // Kubernetes rejects a pod whose request exceeds its limit.
    assert.ok(
      mebibytes(container.resources.requests.memory) <= mebibytes(container.resources.limits.memory),
      `${where}: memory request ${container.resources.requests.memory} above limit ${container.resources.limits.memory}`,
    )
  }
}

function mebibytes(quantity: string): number {
  const match = /^(\d+)(Mi|Gi)$/.exec(quantity)
  assert.ok(match, `memory quantity ${quantity} in Mi or Gi`)
  return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1)
}

function resolvePort(container: Doc, port: number | string, where: string): number {
  if (typeof port === 'number') return port
  const match = (container.ports ?? []).find((candidate: Doc) => candidate.name === port)
  assert.ok(match, `${where}: no container port named ${port}`)
  return match.containerPort as number
}

describe('Kubernetes manifests', () => {
  it('parse, and kustomization.yaml lists exactly the manifest files', () => {
    assert.ok(resources.length > 0)
    const listed = [...(kustomization.resources as string[])].sort()
    assert.deepEqual(listed, k8sFiles.filter((file) => file !== 'kustomization.yaml'))
    assert.equal(kustomization.namespace, namespace)
    assert.deepEqual((kustomization.images as Doc[]).map((image) => image.name), [tracewellImage])
  })

  it('put every namespaced object in the one namespace, with unique names', () => {
    const namespaceDoc = ofKind('Namespace')
    assert.deepEqual(namespaceDoc.map((doc) => doc.metadata.name), [namespace])
    const seen = new Set<string>()
    for (const { file, doc } of resources) {
      assert.ok(doc.apiVersion && doc.kind && doc.metadata?.name, `${file}: apiVersion, kind and metadata.name`)
      const key = `${doc.kind}/${doc.metadata.name}`
      assert.ok(!seen.has(key), `${file}: ${key} defined twice`)
      seen.add(key)
      if (doc.kind !== 'Namespace') assert.equal(doc.metadata.namespace, namespace, `${file}: ${key} namespace`)
    }
  })

  it('run every Tracewell container from the one image', () => {
    const containers = [...deployments, ...ofKind('Job')].flatMap((doc) => [...podSpecOf(doc).containers, ...(podSpecOf(doc).initContainers ?? [])].map((container: Doc) => ({ doc, container })))
    assert.ok(containers.length >= 6, 'the five services and the migration')
    for (const { doc, container } of containers) assert.equal(imageRepository(container.image), tracewellImage, `${doc.metadata.name}: image`)
  })

  it('have one Deployment per service, each running its entry file on its default port', () => {
    assert.deepEqual(deployments.map((doc) => doc.metadata.name).sort(), Object.keys(services).sort())
    for (const doc of deployments) {
      const name = doc.metadata.name as string
      const spec = services[name]!
      const pod = podSpecOf(doc)
      assert.equal(pod.containers.length, 1, `${name}: one container`)
      const container = pod.containers[0]
      assert.equal(container.command, undefined, `${name}: keep the image's ENTRYPOINT (node); choose the service with args`)
      assertEntryFile(container.args, spec, `Deployment ${name}`, spec.nodeFlags)
      assert.equal(resolvePort(container, 'http', name), spec.port, `${name}: the http containerPort`)
      const others = (container.ports as Doc[]).filter((port) => port.name !== 'http').map((port) => [port.name, port.containerPort])
      assert.deepEqual(others, name === 'ingest' ? [['otlp-grpc', otlpGrpcPort]] : [], `${name}: other container ports`)
      assert.ok(labelsMatch(doc.spec.selector.matchLabels, doc.spec.template.metadata.labels), `${name}: selector matches the pod labels`)
      assert.ok(doc.spec.replicas >= 1, `${name}: replicas`)
      assert.ok(pod.terminationGracePeriodSeconds >= 30, `${name}: terminationGracePeriodSeconds ≥ 30`)
      assertHardenedPod(pod, `Deployment ${name}`)
    }
    assert.equal(named('Deployment', 'janitor')?.spec.replicas, 1)
    for (const name of ['ingest', 'writer', 'control-plane']) assert.ok(named('Deployment', name)!.spec.replicas >= 2, `${name}: replicas ≥ 2`)
  })

  it('probe /readyz for readiness and /healthz for liveness on the service port', () => {
    for (const doc of deployments) {
      const name = doc.metadata.name as string
      const container = podSpecOf(doc).containers[0]
      const probes = { readinessProbe: '/readyz', livenessProbe: '/healthz', startupProbe: '/healthz' } as const
      for (const [probe, path] of Object.entries(probes)) {
        const httpGet = container[probe]?.httpGet
        if (probe === 'startupProbe' && httpGet === undefined) continue
        assert.ok(httpGet, `${name}: ${probe} is an httpGet probe`)
        assert.equal(httpGet.path, path, `${name}: ${probe} path`)
        assert.equal(resolvePort(container, httpGet.port, name), services[name]!.port, `${name}: ${probe} port`)
      }
    }
  })

  it('set only settings the service knows, every required one, secrets from the Secret, and values the config loader accepts', () => {
    for (const doc of deployments) {
      const name = doc.metadata.name as string
      const spec = services[name]!
      const { names, values } = containerEnvironment(podSpecOf(doc).containers[0], `Deployment ${name}`)
      assertSettingsKnown(spec.schema, names, `Deployment ${name}`)
      assertRequiredProvided(spec.schema, names, `Deployment ${name}`)
      const config = loadConfig(spec.schema, values) as Record<string, unknown>
      assert.equal(config.PORT, spec.port, `${name}: PORT must stay the port the probes use`)
    }
  })

  it('expose ingest, control-plane and janitor by ClusterIP Services, and the writer metrics port', () => {
    for (const name of ['ingest', 'control-plane', 'janitor']) {
      const service = named('Service', name)
      assert.ok(service, `Service ${name}`)
      assert.ok((service.spec.type ?? 'ClusterIP') === 'ClusterIP', `Service ${name}: ClusterIP`)
    }
    const writerServices = k8sServices.filter((service) => labelsMatch(service.spec.selector, named('Deployment', 'writer')!.spec.template.metadata.labels))
    assert.equal(writerServices.length, 1, 'one Service for the writer metrics')
    for (const service of k8sServices) {
      const name = service.metadata.name as string
      const targets = deployments.filter((doc) => labelsMatch(service.spec.selector, doc.spec.template.metadata.labels))
      assert.equal(targets.length, 1, `Service ${name} selects exactly one Deployment`)
      const target = targets[0]!
      const container = podSpecOf(target).containers[0]
      for (const port of service.spec.ports) {
        const expected = port.name === 'otlp-grpc' ? otlpGrpcPort : services[target.metadata.name]!.port
        assert.equal(port.port, expected, `Service ${name}: port ${port.name}`)
        assert.equal(resolvePort(container, port.targetPort ?? port.port, name), expected, `Service ${name}: targetPort of ${port.name}`)
      }
    }
  })

  it('expose OTLP/gRPC on ingest: container port and Service port otlp-grpc, as gRPC', () => {
    const service = named('Service', 'ingest')!
    const grpc = (service.spec.ports as Doc[]).find((port) => port.name === 'otlp-grpc')
    assert.ok(grpc, 'Service ingest: a port named otlp-grpc')
    assert.equal(grpc.port, otlpGrpcPort)
    assert.equal(grpc.appProtocol, 'grpc')
    assert.equal(resolvePort(podSpecOf(named('Deployment', 'ingest')!).containers[0], grpc.targetPort, 'ingest'), otlpGrpcPort)
  })

  it('autoscale ingest on CPU with autoscaling/v2', () => {
    const hpas = ofKind('HorizontalPodAutoscaler')
    assert.deepEqual(hpas.map((hpa) => hpa.spec.scaleTargetRef.name), ['ingest'], 'the writer has no HPA of its own: KEDA creates it')
    for (const hpa of hpas) {
      assert.equal(hpa.apiVersion, 'autoscaling/v2')
      assert.equal(hpa.spec.scaleTargetRef.kind, 'Deployment')
      const target = named('Deployment', hpa.spec.scaleTargetRef.name)
      assert.ok(target, `HPA ${hpa.metadata.name}: target exists`)
      assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.minReplicas <= hpa.spec.maxReplicas, `HPA ${hpa.metadata.name}: replica bounds`)
      const cpu = (hpa.spec.metrics as Doc[]).find((metric) => metric.type === 'Resource' && metric.resource.name === 'cpu')
      assert.ok(cpu?.resource.target.averageUtilization > 0, `HPA ${hpa.metadata.name}: cpu utilization target`)
      // Utilization is a percentage of the request, so the target needs one.
      assert.ok(podSpecOf(target).containers[0].resources.requests.cpu)
    }
  })

  it("autoscale the writer with KEDA on the span-batch queue's BullMQ wait list, and on CPU", () => {
    const scaledObjects = ofKind('ScaledObject')
    assert.equal(scaledObjects.length, 1)
    const scaled = scaledObjects[0]!
    assert.equal(scaled.apiVersion, 'keda.sh/v1alpha1')
    assert.deepEqual(scaled.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'writer' })
    assert.ok(named('Deployment', 'writer'), 'the target Deployment exists')
    assert.ok(scaled.spec.minReplicaCount >= 2 && scaled.spec.minReplicaCount <= scaled.spec.maxReplicaCount, 'replica bounds')

    const redis = (scaled.spec.triggers as Doc[]).find((trigger) => trigger.type === 'redis')
    assert.ok(redis, 'a redis (list length) trigger')
    // BullMQ keeps the jobs no worker has taken in the list `<prefix>:<queue>:wait`.
    const prefixes = ['tracewell-writer', 'tracewell-ingest'].map((name) => configMaps.find((doc) => doc.metadata.name === name)?.data.QUEUE_PREFIX)
    assert.equal(prefixes[0], prefixes[1], 'ingest and writer use the same queue prefix')
    assert.equal(redis.metadata.listName, `${prefixes[0]}:${QueueNames.spanBatches}:wait`)
    assert.ok(Number(redis.metadata.listLength) > 0, 'listLength: target jobs waiting per writer')
    // A project's jobs past its first turn wait in BullMQ's prioritized sorted set (project-turns.ts).
    const later = (scaled.spec.triggers as Doc[]).filter((trigger) => trigger.type === 'redis').map((trigger) => trigger.metadata.listName)
    assert.deepEqual(later, [`${prefixes[0]}:${QueueNames.spanBatches}:wait`, `${prefixes[0]}:${QueueNames.spanBatches}:prioritized`])
    const cpu = (scaled.spec.triggers as Doc[]).find((trigger) => trigger.type === 'cpu')
    assert.ok(Number(cpu?.metadata.value) > 0 && podSpecOf(named('Deployment', 'writer')!).containers[0].resources.requests.cpu, 'a cpu trigger, with a cpu request')

    const auth = ofKind('TriggerAuthentication').find((doc) => doc.metadata.name === redis.authenticationRef?.name)
    assert.ok(auth, 'the trigger authentication is in the manifests')
    assert.deepEqual((auth.spec.secretTargetRef as Doc[]).map((ref) => ref.parameter).sort(), ['address', 'password'])
    for (const ref of auth.spec.secretTargetRef as Doc[]) {
      const secret = secrets.find((doc) => doc.metadata.name === ref.name)
      assert.ok(secret && ref.key in secret.stringData, `Secret key ${ref.key}`)
    }
  })

  it('migrate in a Job that removes itself once finished, so the next apply creates it anew', () => {
    const job = named('Job', 'migrate')
    assert.ok(job, 'a migration Job')
    assert.ok(Number(job.spec.ttlSecondsAfterFinished) > 0, 'ttlSecondsAfterFinished: its pod template is immutable, so it must be gone before the next release')
    assert.ok(Number(job.spec.backoffLimit) > 0, 'retried on failure')
    assert.equal(job.metadata.annotations?.['argocd.argoproj.io/hook'], 'PreSync')
    const pod = podSpecOf(job)
    assert.equal(pod.restartPolicy, 'Never')
    const [container] = pod.containers
    assert.equal(container.image, podSpecOf(named('Deployment', 'control-plane')!).containers[0].image, 'the services\' image')
    assert.equal(container.command, undefined, "keep the image's ENTRYPOINT (node)")
    assertEntryFile(container.args, migrate, 'migration Job')
    assertHardenedPod(pod, 'migration Job')
    const { names, values } = containerEnvironment(container, 'migration Job')
    assertSettingsKnown(migrate.schema, names, 'migration Job')
    // Optional in the schema (the embedded database), but a cluster must migrate the real one.
    assert.ok(names.includes('DATABASE_URL'), 'migration Job: DATABASE_URL')
    // The writers' queue, to pause them around a backfill, named as the writers name it.
    const settings = loadConfig(migrate.schema, values)
    const writerSettings = containerEnvironment(podSpecOf(named('Deployment', 'writer')!).containers[0], 'writer').values
    assert.ok(names.includes('REDIS_URL'), 'migration Job: REDIS_URL')
    assert.equal(settings.QUEUE_PREFIX, loadConfig(services.writer!.schema, writerSettings).QUEUE_PREFIX, "the writers' QUEUE_PREFIX")
    for (const mount of container.volumeMounts ?? []) assert.ok(pod.volumes.some((volume: Doc) => volume.name === mount.name), `volume ${mount.name}`)
  })

  it('start every service only on its own schema: an init container waits for the migration, applying nothing', () => {
    for (const deployment of deployments) {
      const where = `${deployment.metadata.name}: init container`
      const pod = podSpecOf(deployment)
      assert.deepEqual(pod.initContainers?.map((container: Doc) => container.name), ['wait-for-schema'], where)
      const [container] = pod.initContainers
      assert.equal(container.image, pod.containers[0].image, `${where}: the service's own image`)
      assertEntryFile(container.args, migrate, where)
      assert.ok((container.args as string[]).includes('--wait'), `${where}: --wait, never applying migrations itself`)
      assertHardenedPod({ ...pod, containers: pod.initContainers }, where)
      const { names, values } = containerEnvironment(container, where)
      assertSettingsKnown(migrate.schema, names, where)
      assert.ok(names.includes('DATABASE_URL'), `${where}: DATABASE_URL`)
      assert.ok(loadConfig(migrate.schema, values).STARTUP_RETRY_SECONDS >= 300, `${where}: waits long enough for a migration with a backfill`)
    }
  })

  it('spread every Deployment that runs several replicas over zones and nodes', () => {
    const autoscaled = new Set([...ofKind('HorizontalPodAutoscaler'), ...ofKind('ScaledObject')].map((doc) => doc.spec.scaleTargetRef.name))
    for (const deployment of deployments.filter((doc) => Number(doc.spec.replicas) > 1 || autoscaled.has(doc.metadata.name))) {
      const constraints = podSpecOf(deployment).topologySpreadConstraints as Doc[] | undefined
      const where = `${deployment.metadata.name}: topologySpreadConstraints`
      assert.deepEqual(constraints?.map((constraint) => constraint.topologyKey), ['topology.kubernetes.io/zone', 'kubernetes.io/hostname'], where)
      for (const constraint of constraints ?? []) {
        assert.deepEqual(constraint.labelSelector.matchLabels, deployment.spec.selector.matchLabels, `${where}: selects the Deployment's own pods`)
        assert.equal(constraint.whenUnsatisfiable, 'ScheduleAnyway', `${where}: a small cluster still schedules every replica`)
      }
    }
  })

  it('deny ingress by default: the janitor only from its CronJob and Prometheus, the writer and evaluator only from Prometheus', () => {
    const policies = ofKind('NetworkPolicy')
    const selects = (policy: Doc, labels: Record<string, string>): boolean => {
      const { matchLabels = {}, matchExpressions = [] } = policy.spec.podSelector as { matchLabels?: Record<string, string>; matchExpressions?: Doc[] }
      return labelsMatch(matchLabels, labels) && matchExpressions.every((expression) => expression.operator === 'In' && expression.values.includes(labels[expression.key]))
    }
    const denyAll = policies.find((policy) => Object.keys(policy.spec.podSelector).length === 0)
    assert.ok(denyAll, 'a policy selecting every pod')
    assert.deepEqual([denyAll.spec.policyTypes, denyAll.spec.ingress], [['Ingress'], undefined], 'allowing no ingress')
    const sourcesFor = (component: string): Doc[] => {
      const labels = podSpecOf(named('Deployment', component)!) && named('Deployment', component)!.spec.template.metadata.labels
      return policies.filter((policy) => policy !== denyAll && selects(policy, labels)).flatMap((policy) => (policy.spec.ingress as Doc[]).map((rule) => rule.from))
    }
    const cronLabels = podSpecOf(named('CronJob', 'janitor-cleanup')!) && named('CronJob', 'janitor-cleanup')!.spec.jobTemplate.spec.template.metadata.labels
    const janitorSources = sourcesFor('janitor').flat()
    assert.ok(janitorSources.length > 0, 'janitor: some source, never everyone')
    assert.ok(janitorSources.some((source) => source.podSelector && labelsMatch(source.podSelector.matchLabels, cronLabels)), 'janitor: from the CronJob pods')
    assert.ok(janitorSources.every((source) => source.podSelector ? labelsMatch(source.podSelector.matchLabels, cronLabels) : source.namespaceSelector), 'janitor: from nothing else but a namespace (Prometheus)')
    for (const component of ['writer', 'evaluator']) {
      const sources = sourcesFor(component)
      assert.ok(sources.length > 0 && sources.every((from) => from?.length > 0 && from.every((source: Doc) => source.namespaceSelector && !source.podSelector)), `${component}: only from the monitoring namespace`)
    }
    for (const component of ['ingest', 'control-plane']) assert.ok(sourcesFor(component).some((from) => from === undefined), `${component}: from anywhere`)
  })

  it('route one base URL with an Ingress: trace intake to ingest, the rest to the control plane, never the janitor', () => {
    const ingresses = ofKind('Ingress')
    assert.equal(ingresses.length, 1)
    const ingress = ingresses[0]!
    assert.equal(ingress.apiVersion, 'networking.k8s.io/v1')
    const paths = (ingress.spec.rules as Doc[]).flatMap((rule) => rule.http.paths as Doc[])
    const routes = paths.map((path) => {
      const backend = path.backend.service
      const service = named('Service', backend.name)
      assert.ok(service, `${path.path}: Service ${backend.name} exists`)
      const port = (service.spec.ports as Doc[]).find((candidate) => (backend.port.name ? candidate.name === backend.port.name : candidate.port === backend.port.number))
      assert.ok(port, `${path.path}: Service ${backend.name} has port ${backend.port.name ?? backend.port.number}`)
      assert.ok(['Exact', 'Prefix'].includes(path.pathType), `${path.path}: pathType`)
      return [path.path, path.pathType, backend.name, port.port]
    })
    assert.deepEqual(routes, [
      ['/v1/traces', 'Exact', 'ingest', defaultPorts.ingest],
      ['/api/trace', 'Exact', 'ingest', defaultPorts.ingest],
      ['/api/public/otel/v1/traces', 'Exact', 'ingest', defaultPorts.ingest],
      ['/', 'Prefix', 'control-plane', defaultPorts.controlPlane],
    ])
    // Ingest accepts bodies up to MAX_BODY_BYTES; ingress-nginx's default limit is 1 MiB.
    const maxBody = Number(configMaps.find((doc) => doc.metadata.name === 'tracewell-ingest')?.data.MAX_BODY_BYTES)
    const limit = /^(\d+)m$/.exec(ingress.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '')
    assert.ok(limit && Number(limit[1]) * 1024 * 1024 >= maxBody, 'proxy-body-size covers MAX_BODY_BYTES')
  })

  it('name the image untagged in the manifests and pin one immutable release tag in kustomization.yaml', () => {
    const [image] = kustomization.images as Doc[]
    assert.match(String(image!.newTag ?? ''), /^[0-9]+\.[0-9]+\.[0-9]+$/, 'a version tag')
    for (const { file, doc } of resources) {
      if (!doc.spec) continue
      const pod = doc.kind === 'CronJob' || doc.spec.template ? podSpecOf(doc) : undefined
      for (const container of [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])]) {
        if (imageRepository(container.image) === tracewellImage) assert.equal(container.image, tracewellImage, `${file}: the tag is set in kustomization.yaml only`)
        else assert.match(container.image, /:[0-9][^:/]*$|@sha256:/, `${file}: ${container.image} is pinned to a version`)
        assert.doesNotMatch(container.image, /:latest$/, `${file}: ${container.image}`)
      }
    }
  })

  const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8', timeout: 10_000 }).status === 0
  it('render with kustomize into pinned images and the prefixed wait-list key', { skip: !kubectl && 'needs kubectl (for kubectl kustomize)' }, () => {
    const rendered = spawnSync('kubectl', ['kustomize', k8sDir], { encoding: 'utf8', timeout: 60_000 })
    assert.equal(rendered.status, 0, rendered.stderr)
    const documents = parseAllDocuments(rendered.stdout).map((document) => document.toJS() as Doc)
    const images = documents.flatMap((doc) => {
      if (!['Deployment', 'CronJob', 'Job'].includes(doc.kind)) return []
      const pod = podSpecOf(doc)
      return [...pod.containers, ...(pod.initContainers ?? [])].map((container: Doc) => container.image as string)
    })
    const [image] = kustomization.images as Doc[]
    const ours = images.filter((candidate) => imageRepository(candidate) === (image!.newName ?? tracewellImage))
    assert.equal(ours.length, 11, 'five Deployments, their five schema waits and the migration Job')
    for (const candidate of ours) assert.equal(candidate, `${image!.newName ?? tracewellImage}:${image!.newTag}`)
    for (const candidate of images) assert.doesNotMatch(candidate, /:latest$|^[^:@]+$/)
    const scaled = documents.find((doc) => doc.kind === 'ScaledObject')!
    const writerConfig = documents.find((doc) => doc.kind === 'ConfigMap' && doc.metadata.name === 'tracewell-writer')!
    assert.equal(scaled.spec.triggers.find((trigger: Doc) => trigger.type === 'redis').metadata.listName, `${writerConfig.data.QUEUE_PREFIX}:${QueueNames.spanBatches}:wait`)
  })

  describe('janitor CronJob', () => {
    const cronJobs = ofKind('CronJob')
    const cronJob = cronJobs[0]!
    const pod = podSpecOf(cronJob)
    const container = pod.containers[0] as Doc
    const script = [...(container.command ?? []), ...(container.args ?? [])].join('\n')
    const envValue = (name: string): string | undefined => (container.env as Doc[]).find((variable) => variable.name === name)?.value

    it('runs daily, one at a time, with retries and bounded history', () => {
      assert.equal(cronJobs.length, 1)
      assert.equal(cronJob.apiVersion, 'batch/v1')
      assert.equal(cronJob.spec.concurrencyPolicy, 'Forbid')
      assert.match(cronJob.spec.schedule, /^\S+ \S+ \* \* \*$/)
      assert.ok(cronJob.spec.startingDeadlineSeconds > 0)
      assert.ok(cronJob.spec.successfulJobsHistoryLimit >= 1 && cronJob.spec.failedJobsHistoryLimit >= 1)
      assert.equal(cronJob.spec.jobTemplate.spec.backoffLimit, 3)
      assert.ok(cronJob.spec.jobTemplate.spec.activeDeadlineSeconds > 0)
      assert.equal(pod.restartPolicy, 'Never')
      assertHardenedPod(pod, 'CronJob')
    })

    it('takes the cron key from the Secret the janitor uses', () => {
      const janitorEnv = (podSpecOf(named('Deployment', 'janitor')!).containers[0].env as Doc[]).find((variable) => variable.name === 'CRON_API_KEY')
      const cronEnv = (container.env as Doc[]).find((variable) => variable.name === 'CRON_API_KEY')
      assert.ok(cronEnv?.valueFrom?.secretKeyRef, 'CronJob CRON_API_KEY from a secretKeyRef')
      assert.equal(cronEnv.value, undefined)
      assert.deepEqual(cronEnv.valueFrom.secretKeyRef, janitorEnv?.valueFrom?.secretKeyRef)
      containerEnvironment(container, 'CronJob')
      assert.match(script, /cron-api-key: %s/)
      assert.match(script, /"\$CRON_API_KEY"/)
    })

    it("calls the janitor Service's cleanup path and fails on an error status", () => {
      const url = new URL(envValue('CLEANUP_ENDPOINT') ?? '')
      const service = named('Service', 'janitor')!
      assert.equal(url.hostname, `${service.metadata.name}.${namespace}.svc`)
      assert.equal(Number(url.port), service.spec.ports[0].port)
      assert.equal(url.port, String(defaultPorts.janitor))
      assert.equal(url.pathname, '/api/cron/cleanup-traces')
      assert.match(script, /--fail-with-body/)
      assert.match(script, /"\$CLEANUP_ENDPOINT"/)
    })

    it('waits longer than the janitor time budget and fits every round in the Job deadline', () => {
      const maxTime = Number(/--max-time (\d+)/.exec(script)?.[1])
      const rounds = Number(envValue('MAX_ROUNDS'))
      assert.ok(maxTime > 0 && rounds >= 2)
      const janitorConfig = configMaps.find((doc) => doc.metadata.name === 'tracewell-janitor')?.data ?? {}
      const budgetMs = Number(janitorConfig.CLEANUP_TIME_BUDGET_MS ?? services.janitor!.schema.properties.CLEANUP_TIME_BUDGET_MS?.default)
      assert.ok(maxTime * 1000 > budgetMs, `curl --max-time ${maxTime}s must exceed the ${budgetMs} ms budget`)
      assert.ok(maxTime * rounds <= cronJob.spec.jobTemplate.spec.activeDeadlineSeconds, 'rounds × --max-time within activeDeadlineSeconds')
    })

    const runnable = spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).status === 0
    it('repeats the call while the janitor answers "complete": false and stops on an error', { skip: !runnable && 'needs sh and curl' }, async () => {
      const answers: Array<[number, unknown]> = []
      const seen: IncomingHttpHeaders[] = []
      const server = createServer((request, response) => {
        seen.push(request.headers)
        const [status, body] = answers.shift() ?? [599, { message: 'unexpected call' }]
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
      })
      server.listen(0, '127.0.0.1')
      await once(server, 'listening')
      const { port } = server.address() as AddressInfo
      const key = `k'ey "with" $(quotes) and %s`
      const run = async (maxRounds: number): Promise<number | null> => {
        const [command, ...args] = [...(container.command as string[]), ...(container.args as string[])]
        const child = spawn(command!, args, {
          env: { PATH: process.env.PATH, CRON_API_KEY: key, CLEANUP_ENDPOINT: `http://127.0.0.1:${port}/api/cron/cleanup-traces`, MAX_ROUNDS: String(maxRounds) },
          stdio: 'ignore',
        })
        const [code] = (await once(child, 'exit')) as [number | null]
        return code
      }
      try {
        const partial = { success: true, message: 'Deleted 5 spans', deletedSpans: 5, projects: [], complete: false }
        const done = { success: true, message: 'Deleted 1 spans', deletedSpans: 1, projects: [], complete: true }
        answers.push([200, partial], [200, partial], [200, done])
        assert.equal(await run(8), 0)
        assert.equal(seen.length, 3)
        for (const headers of seen) assert.equal(headers['cron-api-key'], key)

        seen.length = 0
        answers.push([500, { success: false, message: 'Cleanup failed for 1 project', projects: [] }])
        assert.notEqual(await run(8), 0)
        assert.equal(seen.length, 1)

        seen.length = 0
        answers.push([409, { message: 'Cleanup already running' }])
        assert.notEqual(await run(8), 0)

        seen.length = 0
        answers.push([200, partial], [200, partial], [200, partial])
        assert.equal(await run(2), 0, 'bounded: stops after MAX_ROUNDS')
        assert.equal(seen.length, 2)
        answers.length = 0
      } finally {
        server.close()
      }
    })
  })
})

// ---- compose -------------------------------------------------------------------------------

const compose = loadYamlDocuments(join(dockerDir, 'compose.yml'))[0]!
const composeServices = compose.services as Record<string, Doc>
// The example's encryption-key placeholder is deliberately not hex, so that a copy left unedited
// refuses to start: a real key stands in for it here.
const sampleEnv: Record<string, string> = { ...parseEnvFile(join(dockerDir, '.env.example')), LLM_CONNECTION_ENCRYPTION_KEY: 'e'.repeat(64) }

function composeEnvironment(service: Doc): Record<string, string> {
  const environment = service.environment ?? {}
  assert.ok(!Array.isArray(environment), 'environment as a mapping')
  return Object.fromEntries(Object.entries(environment).map(([name, value]) => [name, String(value)]))
}

describe('compose.yml', () => {
  it('has Postgres, Redis, the migration and the five services', () => {
    assert.deepEqual(Object.keys(composeServices).sort(), ['control-plane', 'evaluator', 'ingest', 'janitor', 'migrate', 'postgres', 'redis', 'writer'])
  })

  it('runs Postgres 17 and Redis 7 with health checks and volumes, Redis persistent and never evicting', () => {
    const postgres = composeServices.postgres!
    assert.equal(postgres.image, 'postgres:17')
    assert.match(postgres.healthcheck.test.join(' '), /pg_isready/)
    assert.ok(postgres.volumes?.some((volume: string) => volume.endsWith(':/var/lib/postgresql/data')))
    const redis = composeServices.redis!
    assert.equal(redis.image, 'redis:7')
    assert.match(redis.command.join(' '), /--appendonly yes/)
    assert.match(redis.command.join(' '), /--maxmemory-policy noeviction/)
    assert.deepEqual(redis.healthcheck.test, ['CMD', 'redis-cli', 'ping'])
    assert.ok(redis.volumes?.some((volume: string) => volume.endsWith(':/data')))
    for (const volume of [...postgres.volumes, ...redis.volumes]) assert.ok(volume.split(':')[0] in compose.volumes, `named volume ${volume}`)
  })

  it('builds every Tracewell service from docker/Dockerfile at the repository root into the one image', () => {
    for (const name of ['migrate', ...Object.keys(services)]) {
      const service = composeServices[name]!
      assert.equal(imageRepository(interpolate(service.image, sampleEnv)), tracewellImage, `${name}: image`)
      assert.equal(resolve(dockerDir, service.build.context), repoRoot, `${name}: build context is the repository root`)
      assert.equal(service.build.dockerfile, 'docker/Dockerfile')
      assert.ok(existsSync(join(repoRoot, service.build.dockerfile)))
      assert.equal(interpolate(service.build.args.BASE_IMAGE, {}), dockerfile.args.BASE_IMAGE, `${name}: builds on the Dockerfile's default base unless docker/.env names another`)
    }
  })

  it('names every image with a tag, never latest', () => {
    for (const [name, service] of Object.entries(composeServices)) {
      const image = interpolate(service.image, sampleEnv)
      assert.match(image, /:[^:/]+$/, `${name}: ${image} has a tag`)
      assert.doesNotMatch(image, /:latest$/, `${name}: ${image}`)
    }
  })

  it('runs the migration once, after Postgres is healthy', () => {
    const service = composeServices.migrate!
    assertEntryFile(service.command, migrate, 'compose migrate')
    assert.equal(service.restart, 'no')
    assert.equal(service.depends_on?.postgres?.condition, 'service_healthy')
    const environment = composeEnvironment(service)
    assertSettingsKnown(migrate.schema, Object.keys(environment), 'compose migrate')
    assert.ok('DATABASE_URL' in environment)
  })

  for (const [name, spec] of Object.entries(services)) {
    it(`runs ${name} after the migration, on port ${spec.port}, probed on /readyz`, () => {
      const service = composeServices[name]!
      assertEntryFile(service.command, spec, `compose ${name}`, spec.nodeFlags)
      assert.equal(service.depends_on?.migrate?.condition, 'service_completed_successfully')
      assert.equal(service.depends_on?.postgres?.condition, 'service_healthy')
      assert.equal(service.depends_on?.redis?.condition, 'service_healthy')
      const grpc = name === 'ingest' ? [`${otlpGrpcPort}:${otlpGrpcPort}`] : []
      assert.deepEqual(service.ports, [`${spec.port}:${spec.port}`, ...grpc])
      const test = service.healthcheck.test as string[]
      assert.deepEqual(test.slice(0, 3), ['CMD', 'node', '-e'])
      assert.match(test[3]!, new RegExp(`fetch\\('http://127\\.0\\.0\\.1:${spec.port}/readyz'\\)`))
      assert.match(test[3]!, /process\.exit\(r\.ok\?0:1\)/)
    })

    it(`gives ${name} only its own settings, every required one, and no literal secret`, () => {
      const environment = composeEnvironment(composeServices[name]!)
      const names = Object.keys(environment)
      assertSettingsKnown(spec.schema, names, `compose ${name}`)
      assertRequiredProvided(spec.schema, names, `compose ${name}`)
      for (const [variable, value] of Object.entries(environment)) {
        if (!isSecretName(variable)) continue
        if (variable.endsWith('_URL')) {
          const url = new URL(value.replace(/\$\{[^}]*\}/g, ''))
          assert.equal(url.password, '', `compose ${name}: ${variable} carries a literal password`)
        } else {
          assert.match(value, new RegExp(`^\\$\\{${variable}:[-?][^}]*\\}$`), `compose ${name}: ${variable} must be interpolated`)
        }
      }
      for (const variable of ['ADMIN_API_KEY', 'CRON_API_KEY']) {
        if (variable in environment) assert.match(environment[variable]!, new RegExp(`^\\$\\{${variable}:\\?`), `${variable} is required`)
      }
      const config = loadConfig(spec.schema, Object.fromEntries(names.map((variable) => [variable, interpolate(environment[variable]!, sampleEnv)]))) as Record<string, unknown>
      assert.equal(config.PORT, spec.port)
    })
  }

  it('.env.example names every secret that compose requires', () => {
    const strings: string[] = []
    const collect = (value: unknown): void => {
      if (typeof value === 'string') strings.push(value)
      else if (value && typeof value === 'object') Object.values(value).forEach(collect)
    }
    collect(compose)
    const required = new Set(strings.flatMap((value) => [...value.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*):\?/g)].map((match) => match[1]!)))
    assert.ok(required.has('ADMIN_API_KEY') && required.has('CRON_API_KEY'))
    for (const name of required) assert.ok(sampleEnv[name], `.env.example: ${name}`)
    assert.throws(() => interpolate('${CRON_API_KEY:?set CRON_API_KEY}', {}), /CRON_API_KEY is required/)
  })
})

// ---- Dockerfile ----------------------------------------------------------------------------

const dockerfileText = readFileSync(join(dockerDir, 'Dockerfile'), 'utf8')
const dockerfile = parseDockerfile(dockerfileText)
const runtime = dockerfile.stages.at(-1)!
const instructions = (stage: { instructions: Array<{ keyword: string; args: string }> }, keyword: string): string[] =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.args)
const stageNamed = (name: string) => dockerfile.stages.find((stage) => stage.name === name)
const rootDockerignore = join(repoRoot, '.dockerignore')

describe('Dockerfile', () => {
  it('builds every stage on the BASE_IMAGE argument, whose default is the image build-base-image.sh creates', () => {
    assert.ok(dockerfile.stages.length >= 2)
    for (const stage of dockerfile.stages) assert.equal(stage.from, '${BASE_IMAGE}', `stage ${stage.name}`)
    assert.equal(dockerfile.args.BASE_IMAGE, baseImageOfScript())
    // No registry holds it: it must be said where it comes from.
    assert.match(dockerfileText, /docker\/build-base-image\.sh/)
    // The pinned Node.js major, as the repository's engines ask.
    const engines = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node
    assert.ok(dockerfile.args.BASE_IMAGE!.includes(`node${/>=(\d+)/.exec(engines)?.[1]}`), `${dockerfile.args.BASE_IMAGE} carries the Node.js major of ${engines}`)
  })

  it('builds with the classic builder as with BuildKit: no syntax line, no BuildKit-only flags or heredocs', () => {
    assert.doesNotMatch(dockerfileText, /^#\s*(syntax|escape|check)\s*=/im, 'a parser directive (syntax= makes BuildKit pull a frontend image)')
    for (const stage of dockerfile.stages) {
      for (const { keyword, args } of stage.instructions) {
        const flags = args.match(/(?:^|\s)--[a-z-]+/g)?.map((flag) => flag.trim()) ?? []
        const allowed = keyword === 'COPY' || keyword === 'ADD' ? ['--from', '--chown'] : []
        for (const flag of flags) {
          if (keyword === 'RUN' || keyword === 'ENTRYPOINT' || keyword === 'CMD') break
          assert.ok(allowed.includes(flag), `${keyword} ${flag} is not understood by the classic builder`)
        }
        if (keyword === 'RUN') assert.doesNotMatch(args, /^--/, `RUN ${args}: RUN flags (--mount, --network) are BuildKit-only`)
        assert.doesNotMatch(args, /<<-?\s*['"]?[A-Z]+/, `${keyword}: heredocs are BuildKit-only`)
      }
    }
  })

  it('installs production dependencies only, from the lockfile, in a separate stage', () => {
    const installStages = dockerfile.stages.filter((stage) => instructions(stage, 'RUN').some((run) => /\bnpm ci\b.*--omit=dev/.test(run)))
    assert.equal(installStages.length, 1)
    const deps = installStages[0]!
    assert.notEqual(deps, runtime)
    assert.ok(instructions(runtime, 'COPY').some((copy) => copy.includes(`--from=${deps.name}`)), 'runtime copies the install stage')
    assert.ok(!instructions(runtime, 'RUN').some((run) => /\bnpm (ci|install|i)\b/.test(run)), 'no install in the runtime stage')
  })

  it('gives each install the lockfile and every workspace manifest in its folder, and nothing else, before `npm ci`', () => {
    const manifests = stageNamed('manifests')
    assert.ok(manifests, 'a stage named manifests')
    // It keeps the package.json files down to -maxdepth: every workspace's must be within it.
    const collect = instructions(manifests, 'RUN').join(' ')
    const maxDepth = Number(/-maxdepth (\d+)/.exec(collect)?.[1])
    assert.match(collect, /-name package\.json/)
    assert.match(collect, /cp --parents/)
    assert.match(collect, /cp package-lock\.json \/manifests\//)
    for (const file of ['package.json', ...workspaceManifests()]) assert.ok(file.split('/').length <= maxDepth, `${file} lies deeper than -maxdepth ${maxDepth}`)
    const installs = dockerfile.stages.filter((stage) => instructions(stage, 'RUN').some((run) => /\bnpm ci\b/.test(run)))
    assert.equal(installs.length, 2, 'the production install and the build of the console and services')
    for (const stage of installs) {
      const installAt = stage.instructions.findIndex((instruction) => instruction.keyword === 'RUN' && /\bnpm ci\b/.test(instruction.args))
      const copies = stage.instructions.slice(0, installAt).filter((instruction) => instruction.keyword === 'COPY').map((instruction) => instruction.args)
      // Sources come after the install, so edits keep its cache.
      assert.deepEqual(copies, ['--from=manifests /manifests/ ./'], `stage ${stage.name}: only the manifests before npm ci`)
    }
  })

  it('builds the web console in a stage of its own and ships only its output', () => {
    const console = dockerfile.stages.find((stage) => instructions(stage, 'RUN').some((run) => /npm run build -w @tracewell\/console/.test(run)))
    assert.ok(console?.name, 'a named stage runs the console build')
    assert.notEqual(console, runtime)
    const copied = instructions(console, 'COPY').map((copy) => copySources(copy).sources).flat()
    // apps/console/tsconfig.json extends the root one, which Vite's transform reads.
    assert.ok(copied.includes('tsconfig.base.json') && copied.includes('apps/console/'))
    assert.ok(instructions(runtime, 'COPY').includes(`--from=${console.name} /app/apps/console/dist/ ./apps/console/dist/`), 'the runtime copies the built console')
    // The same stage compiles the services; the runtime takes every bundle the image's commands run.
    assert.ok(instructions(console, 'RUN').includes('npm run build:services'), 'the build stage compiles the services')
    for (const bundle of bundles.keys()) {
      const folder = `${bundle.slice(0, bundle.lastIndexOf('/') + 1)}`
      assert.ok(instructions(runtime, 'COPY').includes(`--from=${console.name} /app/${folder} ./${folder}`), `the runtime copies ${folder}`)
      assert.ok(isDockerIgnored(dockerIgnoreRules(rootDockerignore), bundle), `${bundle} built on the host never leaks in`)
    }
    assert.ok(isDockerIgnored(dockerIgnoreRules(rootDockerignore), 'apps/console/dist/index.html'), 'a build on the host never leaks in')
  })

  it('runs as the non-root node user with node as the entry point and the service as the command', () => {
    const users = instructions(runtime, 'USER')
    assert.ok(users.length > 0, 'a USER instruction')
    assert.ok(!['root', '0'].includes(users.at(-1)!.split(':')[0]!), 'the last USER is not root')
    assert.equal(users.at(-1), 'node')
    assert.deepEqual(JSON.parse(instructions(runtime, 'ENTRYPOINT').at(-1)!), ['node', ...serviceNodeFlags])
    const command = JSON.parse(instructions(runtime, 'CMD').at(-1)!) as string[]
    assert.deepEqual(command, ['apps/all-in-one/dist/server.mjs'])
    assert.equal(bundles.get('apps/all-in-one/dist/server.mjs'), 'apps/all-in-one/src/server.ts')
    assert.ok(instructions(runtime, 'ENV').some((env) => /\bNODE_ENV=production\b/.test(env)))
    assert.deepEqual(instructions(runtime, 'HEALTHCHECK'), [])
  })

  it('exposes every service port and the OTLP/gRPC port', () => {
    const exposed = instructions(runtime, 'EXPOSE').flatMap((expose) => expose.split(/\s+/)).map(Number).sort((a, b) => a - b)
    assert.deepEqual(exposed, [...Object.values(defaultPorts), otlpGrpcPort].sort((a, b) => a - b))
  })

  it('gives the services the V8 flags of the npm start scripts and the benchmarks', () => {
    // The flags stand in several places that cannot share a variable; this keeps them equal.
    const manifests = ['package.json', ...readdirSync(join(repoRoot, 'apps')).map((app) => `apps/${app}/package.json`)]
    // The service a start script runs: named by its entry file at the root, by the directory in an app.
    const specOf = (manifest: string, script: string) =>
      Object.values(services).find(({ source }) => (manifest === 'package.json' ? script.includes(source) : source.startsWith(manifest.replace('package.json', ''))))
    const checked: string[] = []
    for (const manifest of manifests) {
      const scripts = (JSON.parse(readFileSync(join(repoRoot, manifest), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {}
      for (const [name, script] of Object.entries(scripts)) {
        if (name !== 'start' && !name.startsWith('start:')) continue
        // Run from sources, a service keeps its stripped sources (docs/settings.md); the image's bundles need no hook.
        const [node, ...words] = script.split(' ')
        assert.equal(node, 'node', `${manifest} ${name}: ${script}`)
        assert.equal(words.slice(0, 2).join(' '), '--import @tracewell/service/typescript-sources', `${manifest} ${name}: ${script}`)
        words.splice(0, 2)
        const flags = words.filter((word) => word.startsWith('--'))
        const expected = [...serviceNodeFlags, ...(specOf(manifest, script)?.nodeFlags ?? [])]
        assert.deepEqual(effectiveNodeFlags(flags), effectiveNodeFlags(expected), `${manifest} ${name}: ${script}`)
        checked.push(`${manifest} ${name}`)
      }
    }
    // Both places the writer is started from, with its own flags.
    assert.ok(checked.includes('package.json start:writer') && checked.includes('apps/writer/package.json start'), checked.join(', '))
    const bench = readFileSync(join(repoRoot, 'bench/src/service-node-flags.ts'), 'utf8')
    assert.ok(bench.includes(`[${serviceNodeFlags.map((flag) => `'${flag}'`).join(', ')}]`), 'bench/src/service-node-flags.ts')
    assert.ok(bench.includes(`writerNodeFlags = [${services.writer!.nodeFlags!.map((flag) => `'${flag}'`).join(', ')}]`), 'bench/src/service-node-flags.ts: the writer')
  })

  it('ships the sources the services run', () => {
    const sources = instructions(runtime, 'COPY').filter((copy) => !copy.includes('--from')).flatMap((copy) => copySources(copy).sources)
    for (const needed of ['apps/', 'packages/', 'package.json', 'package-lock.json']) assert.ok(sources.includes(needed), `runtime copies ${needed}`)
  })
})

describe('.dockerignore', () => {
  const rules = dockerIgnoreRules(rootDockerignore)

  it('sits at the root of the build context, the one place both builders read', () => {
    assert.ok(existsSync(rootDockerignore))
    // BuildKit would prefer this one and the classic builder ignore it: the two would send different contexts.
    assert.ok(!existsSync(join(dockerDir, 'Dockerfile.dockerignore')), 'no docker/Dockerfile.dockerignore')
  })

  it('keeps the manifests, lockfile and every source file the image needs', () => {
    const needed = ['package.json', 'package-lock.json', 'tsconfig.base.json', ...workspaceManifests(), ...filesUnder('apps').concat(filesUnder('packages')).filter((file) => /\/src\//.test(file) && !/\/test\//.test(file))]
    assert.ok(needed.length > 10)
    for (const file of needed) assert.ok(!isDockerIgnored(rules, file), `${file} is excluded from the build context`)
  })

  it('leaves out host node_modules, git, local data, env files, built console, tests and their output', () => {
    const heavy = [
      'node_modules/yaml/package.json',
      'packages/db/node_modules/pg/package.json',
      '.git/HEAD',
      '.data/pglite/PG_VERSION',
      'apps/all-in-one/.data/pglite/PG_VERSION',
      'docker/.env',
      'apps/console/dist/index.html',
      'apps/console/test/screenshots/traces.png',
      'e2e/test/ingest.test.ts',
      'packages/db/test/migrator.test.ts',
      'bench/src/ingest.bench.ts',
      'bench/results.txt',
      'test-fixtures/otel-js-otlp-json-1.json',
      '.turbo/cache/x',
      'npm-debug.log',
    ]
    for (const file of heavy) assert.ok(isDockerIgnored(rules, file), `${file} is sent to the build`)
  })
})

describe('the Redis Cluster overlay (docker/k8s-redis-cluster)', () => {
  const overlayDir = join(k8sDir, '..', 'k8s-redis-cluster')
  const docsOf = (file: string) => loadYamlDocuments(join(overlayDir, file))

  it('scales the writer on the wait list of every shard the code makes of its QUEUE_PREFIX and QUEUE_SHARDS', () => {
    const shardsSetting = docsOf('queue-settings.patch.yaml').map((doc) => doc.data.QUEUE_SHARDS)
    assert.deepEqual(shardsSetting, ['6', '6'], 'ingest and writer use the same QUEUE_SHARDS')
    const prefix = configMaps.find((doc) => doc.metadata.name === 'tracewell-writer')?.data.QUEUE_PREFIX
    const [scaled] = docsOf('writer-scaledobject.patch.yaml')
    const lists = (scaled!.spec.triggers as Doc[]).filter((trigger) => trigger.type === 'redis-cluster').map((trigger) => trigger.metadata.listName)
    const shards = spanBatchShards({ prefix, count: Number(shardsSetting[0]), cluster: true })
    const expected = ['wait', 'prioritized'].flatMap((list) => shards.map((shard) => `${shard.prefix}:${QueueNames.spanBatches}:${list}`))
    assert.deepEqual(lists, expected, 'each shard’s wait list and its sorted set of later turns')
    const [auth] = docsOf('keda-redis-cluster.yaml')
    assert.deepEqual((auth!.spec.secretTargetRef as Doc[]).map((ref) => ref.key).sort(), ['redis-cluster-nodes', 'redis-password'])
    for (const ref of auth!.spec.secretTargetRef as Doc[]) assert.ok(ref.key in secrets[0]!.stringData, `Secret key ${ref.key}`)
  })

  it('gives ingest, the writer, the evaluator and the migration Job REDIS_CLUSTER_NODES instead of REDIS_URL', () => {
    for (const service of ['ingest', 'writer', 'evaluator', 'migrate']) {
      const [patch] = docsOf(`${service}-redis.patch.yaml`)
      const env = patch!.spec.template.spec.containers[0].env as Doc[]
      assert.deepEqual(env.map((entry) => entry.name), ['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_CLUSTER_PASSWORD'])
      assert.equal(env[0]!.$patch, 'delete')
    }
  })
})
