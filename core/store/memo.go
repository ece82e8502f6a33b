package store

import "bytes"

// rowMemo remembers, within one write transaction, the index keys of the
// rows read with Get, with the bytes they were decoded from. Update needs
// the stored row's keys to move its index entries; a write function almost
// always reads the row it updates, and decoding it a second time inside the
// group commit's serial section was a measurable part of every update. The
// remembered bytes are compared with the stored ones, so a row changed
// since (by a write of this transaction) is decoded again.
type rowMemo struct {
	rows map[rowRef]memoRow
}

type rowRef struct {
	table string
	id    uint64
}

type memoRow struct {
	raw  []byte // a copy: bbolt's slices do not outlive a write
	keys [][]string
}

func (m *rowMemo) remember(table string, id uint64, raw []byte, keys [][]string) {
	if m.rows == nil {
		m.rows = make(map[rowRef]memoRow, 4)
	}
	m.rows[rowRef{table, id}] = memoRow{raw: bytes.Clone(raw), keys: keys}
}

func (m *rowMemo) recall(table string, id uint64, raw []byte) ([][]string, bool) {
	r, ok := m.rows[rowRef{table, id}]
	if !ok || !bytes.Equal(r.raw, raw) {
		return nil, false
	}
	return r.keys, true
}

func (m *rowMemo) forget(table string, id uint64) { delete(m.rows, rowRef{table, id}) }
