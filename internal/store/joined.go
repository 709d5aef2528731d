package store

import (
	"database/sql"
	"fmt"
	"reflect"
	"strings"
)

// rowParts is one row holding the columns of several tables, read once
// and then handed, part after part, to each table's own scan function
// (scanDelivery, scanEndpoint, …): one round trip where each table would
// take one, with the same conversions.
type rowParts struct {
	vals []any
	next int
}

// splitRow reads a row of n columns.
func splitRow(row interface{ Scan(...any) error }, n int) (*rowParts, error) {
	vals := make([]any, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := row.Scan(ptrs...); err != nil {
		return nil, err
	}
	return &rowParts{vals: vals}, nil
}

// Scan assigns the next len(dest) columns.
func (p *rowParts) Scan(dest ...any) error {
	if p.next+len(dest) > len(p.vals) {
		return fmt.Errorf("store: %d columns asked past the %d of the row", p.next+len(dest), len(p.vals))
	}
	for _, d := range dest {
		if err := assign(d, p.vals[p.next]); err != nil {
			return fmt.Errorf("store: column %d: %w", p.next, err)
		}
		p.next++
	}
	return nil
}

// assign stores a driver value (int64, string, []byte, nil; what pgx and
// modernc's SQLite return for our column types) in dest.
func assign(dest, v any) error {
	if s, ok := dest.(sql.Scanner); ok {
		return s.Scan(v)
	}
	d := reflect.ValueOf(dest)
	if d.Kind() != reflect.Pointer || d.IsNil() {
		return fmt.Errorf("destination %T is not a pointer", dest)
	}
	e := d.Elem()
	switch x := v.(type) {
	case nil:
		e.SetZero()
		return nil
	case int64:
		switch e.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			e.SetInt(x)
			return nil
		case reflect.Bool:
			e.SetBool(x != 0)
			return nil
		}
	case bool:
		if e.Kind() == reflect.Bool {
			e.SetBool(x)
			return nil
		}
	case string:
		switch {
		case e.Kind() == reflect.String:
			e.SetString(x)
			return nil
		case e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8:
			e.SetBytes([]byte(x))
			return nil
		}
	case []byte:
		switch {
		case e.Kind() == reflect.String:
			e.SetString(string(x))
			return nil
		case e.Kind() == reflect.Slice && e.Type().Elem().Kind() == reflect.Uint8:
			e.SetBytes(append([]byte(nil), x...))
			return nil
		}
	}
	return fmt.Errorf("cannot store %T in %T", v, dest)
}

// qualified prefixes each of a column list's names with a table alias.
func qualified(alias, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}
