import { queryOptions } from '@tanstack/react-query';
import {
  ClassDeleteAnswer,
  NextClassesAnswer,
  TimetableAnswer,
  type ClassSessionFields,
  type NextClass,
} from '@hyperdesk/contract';
import { request } from './http';

/** A course's class timetable (issue 22.1): its sessions, next class and how early machines start; instructor only. */
export const timetableKey = (packId: string) => ['pack', 'timetable', packId] as const;
export const timetableQuery = (packId: string) =>
  queryOptions({
    queryKey: timetableKey(packId),
    queryFn: () => request('GET', `/v1/pack/timetable?packId=${encodeURIComponent(packId)}`, { schema: TimetableAnswer }),
  });

export function addClassSession(packId: string, fields: ClassSessionFields): Promise<TimetableAnswer> {
  return request('POST', '/v1/pack/timetable/add', { body: { packId, ...fields }, schema: TimetableAnswer });
}

export function changeClassSession(packId: string, id: string, fields: ClassSessionFields): Promise<TimetableAnswer> {
  return request('POST', '/v1/pack/timetable/change', { body: { packId, id, ...fields }, schema: TimetableAnswer });
}

export function deleteClassSession(packId: string, id: string): Promise<{ id: string }> {
  return request('POST', '/v1/pack/timetable/delete', { body: { packId, id }, schema: ClassDeleteAnswer });
}

/** The next class of every course the user teaches or is a student of ("Next class: …" on each course card). */
export const nextClassesKey = ['classes', 'next'] as const;
export const nextClassesQuery = () =>
  queryOptions({
    queryKey: nextClassesKey,
    queryFn: async (): Promise<NextClass[]> => (await request('GET', '/v1/user/classes', { schema: NextClassesAnswer })).classes,
    refetchInterval: 60_000,
  });
