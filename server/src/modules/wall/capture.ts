import type { Duplex } from 'node:stream';
import type { Config } from '../../config';
import { connectionFromDir, createLxdClient, type LxdClient } from '../machines/providers/lxd/client';
import { ExecStream } from '../machines/providers/lxd/exec-stream';
import { instanceOf } from '../machines/providers/lxd/provider';
import { MultipartReader, sanitizeJpeg } from './jpeg';

/** What a capture makes: width of the pictures (height follows the screen's shape), pictures a second, JPEG quality. */
export interface CaptureSpec {
  width: number;
  fps: number;
  quality: number;
}

/** The wall's thumbnails: small enough that 40 of them a second fit 2 Mbit/s (bench/wall.ts measures it). */
export const THUMB: CaptureSpec = { width: 224, fps: 1, quality: 40 };
/** The desktop the instructor watches (and takes over): legible text, a few pictures a second. */
export const WATCH: CaptureSpec = { width: 1280, fps: 3, quality: 50 };

/** Runs a program inside a machine's desktop as its user, its stdout as a stream (LXD's exec API). */
export type Exec = (machineId: string, argv: string[]) => Duplex;

/**
 * The capture pipeline, run inside the instance as the desktop's user with what the image already has
 * (GStreamer's ximagesrc on the session's X display): scaled, JPEG-encoded, framed by multipartmux on stdout.
 * Niced, so the student's own programs come first. It never touches the streaming agent.
 */
export function captureArgv(spec: CaptureSpec): string[] {
  return [
    'env', 'DISPLAY=:0', 'XAUTHORITY=/run/hyperdesk/xauth',
    'GST_REGISTRY=/var/cache/gstreamer-1.0/registry.bin', 'GST_REGISTRY_UPDATE=no',
    'nice', '-n', '10',
    'gst-launch-1.0', '-q',
    'ximagesrc', 'use-damage=false', 'show-pointer=true', '!',
    `video/x-raw,framerate=${spec.fps}/1`, '!',
    'videoscale', '!', `video/x-raw,width=${spec.width},pixel-aspect-ratio=1/1`, '!',
    'videoconvert', '!', `jpegenc`, `quality=${spec.quality}`, '!',
    // sync=false: the pictures leave as they are made (synced to the clock, multipartmux's output waited forever).
    'multipartmux', 'boundary=hdwall', '!', 'fdsink', 'fd=1', 'sync=false',
  ];
}

/** LXD's exec for the deployment's project (its own client: the provider's is not exported), or null elsewhere. */
export function lxdExec(config: Config, providerKind: string): Exec | null {
  if (providerKind !== 'lxd' || config.MACHINE_PROVIDER !== 'lxd') return null;
  let lxd: LxdClient | null = null;
  return (machineId, argv) => {
    lxd ??= createLxdClient(connectionFromDir(config.LXD_URL, config.lxdProject, config.lxdCertDir));
    return new ExecStream(lxd, instanceOf(machineId), argv);
  };
}

export interface Capture {
  stop(): void;
}

/**
 * One running capture: each picture that passes sanitizeJpeg goes to onFrame; a malformed stream or the program's
 * end calls onEnd once (the caller decides whether to start it again).
 */
export function startCapture(exec: Exec, machineId: string, spec: CaptureSpec, onFrame: (jpeg: Buffer) => void, onEnd: (err?: Error) => void): Capture {
  const stream = exec(machineId, captureArgv(spec));
  const reader = new MultipartReader();
  const maxHeight = spec.width * 2;
  let ended = false;
  const finish = (err?: Error) => {
    if (ended) return;
    ended = true;
    stream.destroy();
    onEnd(err);
  };
  stream.on('data', (chunk: Buffer) => {
    if (ended) return;
    try {
      for (const part of reader.push(chunk)) {
        const jpeg = sanitizeJpeg(part, spec.width, maxHeight);
        if (!jpeg) return finish(new Error('capture sent something that is not a picture'));
        onFrame(jpeg);
      }
    } catch (err) {
      finish(err as Error);
    }
  });
  stream.on('error', (err) => finish(err));
  stream.on('close', () => finish());
  stream.on('end', () => finish());
  return { stop: () => finish() };
}
