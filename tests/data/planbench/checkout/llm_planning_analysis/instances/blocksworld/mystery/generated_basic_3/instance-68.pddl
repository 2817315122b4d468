

(define (problem MY-rand-3)
(:domain mystery-4ops)
(:objects a b c )
(:init
(harmony)
(craves a b)
(planet b)
(planet c)
(province a)
(province c)
)
(:goal
(and
(craves a c)
(craves c b))
)
)


