package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/azolla/azolla/internal/domain"
	"github.com/azolla/azolla/internal/store"
	"github.com/azolla/azolla/schemas"
)

// The database transport: a queue table standing in for Redis Streams when
// none is configured. A message is pending from its delivery until it is
// acknowledged (deleted); a pending message idle longer than the receiver's
// min-idle is delivered again, as XAUTOCLAIM would.

const messageCols = `stream, message_id, job_id, enqueue_id, delivered_at, consumer, deliveries, created_at`

func scanMessage(r rowScanner) (*domain.JobMessage, error) {
	var m domain.JobMessage
	err := r.Scan(&m.Stream, &m.MessageID, &m.JobID, &m.EnqueueID, nullTimeCol(&m.DeliveredAt),
		nullStringCol(&m.Consumer), &m.Deliveries, timeCol(&m.CreatedAt))
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// messageIDWidth is the width of assigned message ids: every int64 fits, so
// text order is number order.
const messageIDWidth = 20

// EnqueueJobMessage inserts an undelivered message, numbering it from the
// counter if it has no id.
func (s *Store) EnqueueJobMessage(ctx context.Context, m *domain.JobMessage) (*domain.JobMessage, error) {
	m.CreatedAt = store.NowOr(m.CreatedAt)
	m.DeliveredAt, m.Consumer, m.Deliveries = nil, "", 0
	err := s.inTx(ctx, func(q *querier) error {
		if m.MessageID == "" {
			n, err := q.nextMessageNumber(ctx)
			if err != nil {
				return err
			}
			m.MessageID = fmt.Sprintf("%0*d", messageIDWidth, n)
		}
		if err := schemas.Validate(schemas.JobMessage, m); err != nil {
			return err
		}
		_, err := q.exec(ctx, `INSERT INTO job_messages (`+messageCols+`) VALUES ($1, $2, $3, $4, NULL, NULL, 0, $5)`,
			m.Stream, m.MessageID, m.JobID, m.EnqueueID, q.t(m.CreatedAt))
		if q.d.IsUniqueViolation(err) {
			return fmt.Errorf("message %q: %w", m.MessageID, domain.ErrAlreadyExists)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue job message on %q: %w", m.Stream, err)
	}
	return m, nil
}

// nextMessageNumber takes the next number of the message counter: a
// sequence on PostgreSQL (no lock held to commit), a one-row table on
// SQLite, whose transaction holds the write lock anyway.
func (q *querier) nextMessageNumber(ctx context.Context) (int64, error) {
	query := `UPDATE job_message_seq SET last = last + 1 WHERE id = 1 RETURNING last`
	if q.d.Name == "postgres" {
		query = `SELECT nextval('job_message_seq')`
	}
	var n int64
	if err := q.queryRow(ctx, query).Scan(&n); err != nil {
		return 0, fmt.Errorf("number message: %w", err)
	}
	return n, nil
}

// receiveSQL marks the oldest receivable message of one stream delivered
// and returns it, in one statement. receive adds SKIP LOCKED on
// PostgreSQL, so concurrent receivers each take a different message
// instead of queueing on the same row; SQLite's transaction holds the
// write lock, so receivers take turns.
const receiveSQL = `UPDATE job_messages SET delivered_at = $1, consumer = $2, deliveries = deliveries + 1
	WHERE (stream, message_id) = (
		SELECT stream, message_id FROM job_messages
		WHERE stream = $3 AND (delivered_at IS NULL OR ($4 AND delivered_at <= $5))
		ORDER BY message_id LIMIT 1%s)
	RETURNING ` + messageCols

// ReceiveJobMessage takes one message from the first stream, in p.Streams
// order, that has one.
func (s *Store) ReceiveJobMessage(ctx context.Context, p store.ReceiveJobMessageParams) (*domain.JobMessage, error) {
	if len(p.Streams) == 0 {
		return nil, nil
	}
	now := store.NowOr(p.Now)
	lock := ""
	if s.d.Name == "postgres" {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	query := fmt.Sprintf(receiveSQL, lock)
	redeliver, idleSince := p.MinIdle > 0, now.Add(-p.MinIdle)
	var out *domain.JobMessage
	err := s.inTx(ctx, func(q *querier) error {
		for _, stream := range p.Streams {
			m, err := scanMessage(q.queryRow(ctx, query, q.t(now), p.Consumer, stream, redeliver, q.t(idleSince)))
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return fmt.Errorf("stream %q: %w", stream, err)
			}
			// Checked on the row as written; an error rolls it back.
			if err := schemas.Validate(schemas.JobMessage, m); err != nil {
				return err
			}
			out = m
			return nil
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("receive job message: %w", err)
	}
	return out, nil
}

// AckJobMessage deletes the message; a missing one is not an error.
func (s *Store) AckJobMessage(ctx context.Context, stream, messageID string) error {
	if _, err := s.exec(ctx, `DELETE FROM job_messages WHERE stream = $1 AND message_id = $2`, stream, messageID); err != nil {
		return fmt.Errorf("ack job message %q on %q: %w", messageID, stream, err)
	}
	return nil
}

// GetJobMessage loads a message not yet acknowledged.
func (s *Store) GetJobMessage(ctx context.Context, stream, messageID string) (*domain.JobMessage, error) {
	m, err := scanMessage(s.queryRow(ctx, `SELECT `+messageCols+` FROM job_messages WHERE stream = $1 AND message_id = $2`, stream, messageID))
	if err != nil {
		return nil, fmt.Errorf("get job message: %w", notFound(err, "job message on "+stream, messageID))
	}
	return m, nil
}
