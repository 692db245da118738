package harness

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A create's AlreadyExists is taken as made only for the object the call
// asked for; every other error, and every other object, stays a failure.
func TestMade(t *testing.T) {
	exists := apierrors.NewAlreadyExists(schema.GroupResource{Resource: "serviceaccounts"}, "efs-sa")
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "efs-sa", UID: "u1"}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "efs-sa", errors.New("no"))
	for _, tc := range []struct {
		name  string
		err   error
		same  bool
		get   error
		want  string // "" none
		asked bool
	}{
		{name: "created", err: nil},
		{name: "another error is the error", err: forbidden, want: "forbidden"},
		{name: "the object this call asked for", err: exists, same: true, asked: true},
		{name: "another object of the name", err: exists, asked: true, want: "not what this call asked for"},
		{name: "the object cannot be read", err: exists, get: errors.New("connection refused"), asked: true, want: "reading it: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			err := made(tc.err, func() (metav1.Object, bool, error) {
				asked = true
				return sa, tc.same, tc.get
			})
			if asked != tc.asked {
				t.Errorf("the object read: %v, want %v", asked, tc.asked)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("made: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("made: %v, want it to say %q", err, tc.want)
			}
		})
	}
}
