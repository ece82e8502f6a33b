package postgres

// cursor walks a bucket through range queries, fetching rows ahead in the
// direction of travel. A walk that stops after a row or two (the head of a
// queue, the newest of a list) fetches little; a long one fetches in
// growing pages. What was fetched is thrown away when the transaction
// writes, so the cursor sees the writes made before each move, as a bbolt
// cursor does.
type cursor struct {
	b *bucket
	// rows are the fetched rows in the direction dir (+1 ascending, -1
	// descending) and pos the current one; cur is the current key (nil:
	// off either end).
	rows []row
	pos  int
	dir  int
	cur  []byte
	// full says the last fetch was cut by its limit: there may be more.
	full bool
	gen  uint64
	page int
}

type row struct{ k, v []byte }

const (
	firstPage = 8
	maxPage   = 1024
)

func (c *cursor) First() ([]byte, []byte) {
	c.page = firstPage
	return c.fetch(+1, nil, false)
}

func (c *cursor) Last() ([]byte, []byte) {
	c.page = firstPage
	return c.fetch(-1, nil, false)
}

func (c *cursor) Seek(seek []byte) ([]byte, []byte) {
	c.page = firstPage
	return c.fetch(+1, seek, true)
}

func (c *cursor) Next() ([]byte, []byte) { return c.move(+1) }
func (c *cursor) Prev() ([]byte, []byte) { return c.move(-1) }

func (c *cursor) move(dir int) ([]byte, []byte) {
	if c.cur == nil {
		return nil, nil
	}
	if dir == c.dir && c.gen == c.b.t.gen {
		if c.pos+1 < len(c.rows) {
			c.pos++
			r := c.rows[c.pos]
			c.cur = r.k
			return r.k, r.v
		}
		if !c.full {
			c.cur = nil
			return nil, nil
		}
		c.page = min(c.page*4, maxPage)
	} else {
		c.page = firstPage
	}
	return c.fetch(dir, c.cur, false)
}

// fetch reads a page from key from in direction dir (from inclusive when
// incl; nil from: from the end in that direction) and moves to its first
// row.
func (c *cursor) fetch(dir int, from []byte, incl bool) ([]byte, []byte) {
	t := c.b.t
	var sql string
	args := []any{c.b.name, c.page}
	switch {
	case from == nil && dir > 0:
		sql = `SELECT k, v FROM fennec_kv WHERE bucket = $1 ORDER BY k LIMIT $2`
	case from == nil:
		sql = `SELECT k, v FROM fennec_kv WHERE bucket = $1 ORDER BY k DESC LIMIT $2`
	case dir > 0 && incl:
		sql = `SELECT k, v FROM fennec_kv WHERE bucket = $1 AND k >= $3 ORDER BY k LIMIT $2`
	case dir > 0:
		sql = `SELECT k, v FROM fennec_kv WHERE bucket = $1 AND k > $3 ORDER BY k LIMIT $2`
	default:
		sql = `SELECT k, v FROM fennec_kv WHERE bucket = $1 AND k < $3 ORDER BY k DESC LIMIT $2`
	}
	if from != nil {
		args = append(args, from)
	}
	c.rows, c.pos, c.dir, c.cur, c.full = c.rows[:0], 0, dir, nil, false
	rows := t.query(sql, args...)
	if rows == nil {
		return nil, nil
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.k, &r.v); err != nil {
			t.fail(err)
			break
		}
		if r.v == nil {
			r.v = []byte{}
		}
		c.rows = append(c.rows, r)
	}
	rows.Close()
	t.fail(rows.Err())
	c.gen = t.gen
	if t.err != nil || len(c.rows) == 0 {
		c.rows = nil
		return nil, nil
	}
	c.full = len(c.rows) == c.page
	c.cur = c.rows[0].k
	return c.rows[0].k, c.rows[0].v
}
